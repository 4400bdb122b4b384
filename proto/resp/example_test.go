package resp_test

import (
	"errors"
	"fmt"

	"github.com/shoalkv/shoal/proto/resp"
)

// A handler's read path: parse every complete command, append replies, and
// report how much input was consumed. A protocol error is answered and the
// connection closed, as Redis does.
func ExampleParser_Parse() {
	var p resp.Parser
	in := []byte("*1\r\n$4\r\nPING\r\nECHO \"hi there\"\r\n*2\r\n$3\r\nGET")
	var out []byte
	consumed := 0
	for {
		args, n, err := p.Parse(in[consumed:])
		if errors.Is(err, resp.ErrIncomplete) {
			break
		}
		if err != nil {
			out = resp.AppendError(out, err.Error())
			break // then close the connection
		}
		consumed += n
		if len(args) == 0 {
			continue // blank line
		}
		switch string(args[0]) {
		case "PING":
			out = resp.AppendSimpleString(out, "PONG")
		case "ECHO":
			out = resp.AppendBulk(out, args[1])
		}
	}
	fmt.Printf("%q, consumed %d of %d\n", out, consumed, len(in))
	// Output: "+PONG\r\n$8\r\nhi there\r\n", consumed 31 of 42
}

func ExampleProtocolError() {
	var p resp.Parser
	_, _, err := p.Parse([]byte("*1\r\n$600000000\r\n"))
	var pe *resp.ProtocolError
	if errors.As(err, &pe) {
		fmt.Println(pe.Error())
		fmt.Println(pe.Detail)
	}
	// Output:
	// ERR Protocol error: invalid bulk length
	// bulk length 600000000 exceeds proto-max-bulk-len 536870912
}

func ExampleAppendMapHeader() {
	b := resp.AppendMapHeader(nil, 2)
	b = resp.AppendBulkString(b, "proto")
	b = resp.AppendInt(b, 3)
	b = resp.AppendBulkString(b, "ratio")
	b = resp.AppendDouble(b, 0.1)
	fmt.Printf("%q\n", b)
	// Output: "%2\r\n$5\r\nproto\r\n:3\r\n$5\r\nratio\r\n,0.10000000000000001\r\n"
}

// A client reads a pipelined batch of replies without copying them.
func ExampleReadReply() {
	in := []byte("+OK\r\n*2\r\n$1\r\na\r\n:7\r\n$-1\r\n")
	for len(in) > 0 {
		r, n, err := resp.ReadReply(in)
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Printf("%c %q int=%d len=%d null=%v\n", r.Kind, r.Data, r.Int, r.Len, r.IsNull())
		in = in[n:]
	}
	// Output:
	// + "OK" int=0 len=0 null=false
	// * "" int=0 len=2 null=false
	// $ "a" int=0 len=1 null=false
	// : "7" int=7 len=0 null=false
	// $ "" int=0 len=-1 null=true
}
