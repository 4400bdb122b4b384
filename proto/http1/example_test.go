package http1_test

import (
	"fmt"

	"github.com/shoalkv/shoal/proto/http1"
)

// Example answers two pipelined requests the way an event-loop handler does: parse
// what is there, append each response, and report how much input was consumed.
func Example() {
	in := []byte("GET /hello HTTP/1.1\r\nHost: example.com\r\n\r\n" +
		"POST /echo HTTP/1.1\r\nHost: example.com\r\nContent-Length: 3\r\nConnection: close\r\n\r\nabc" +
		"GET /partial HT")
	var p http1.Parser
	var req http1.Request
	var out []byte
	consumed := 0
	for {
		n, err := p.Parse(in[consumed:], &req)
		if err == http1.ErrIncomplete {
			break
		}
		if err != nil {
			out = http1.AppendErrorResponse(out, nil, err)
			break
		}
		consumed += n
		fmt.Printf("%s %s body=%q close=%v\n", req.Method, req.Target, req.Body, req.Close)
		out = http1.AppendResponse(out, nil, 200, req.ConnHeader(), req.Body)
	}
	fmt.Println("consumed", consumed, "of", len(in))
	// Output:
	// GET /hello body="" close=false
	// POST /echo body="abc" close=true
	// consumed 125 of 140
}
