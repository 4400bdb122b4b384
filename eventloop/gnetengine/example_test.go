package gnetengine_test

import (
	"bufio"
	"context"
	"fmt"
	"net"

	"github.com/shoalkv/shoal/eventloop"
	"github.com/shoalkv/shoal/eventloop/gnetengine"
)

// upper answers each byte in upper case.
type upper struct{}

func (upper) OnTraffic(c *eventloop.Conn, in []byte) int {
	out := c.OutputBuffer()
	for _, b := range in {
		if 'a' <= b && b <= 'z' {
			b -= 'a' - 'A'
		}
		out = append(out, b)
	}
	c.SetOutputBuffer(out)
	return len(in)
}

// The same Handler runs on gnet by setting Options.Engine.
func ExampleEngine() {
	srv, err := eventloop.NewServer(upper{}, eventloop.Options{Addr: "127.0.0.1:0", Engine: gnetengine.Engine{}})
	if err != nil {
		panic(err)
	}
	if err := srv.Start(); err != nil {
		panic(err)
	}
	defer srv.Shutdown(context.Background())

	c, err := net.Dial("tcp", srv.Addr().String())
	if err != nil {
		panic(err)
	}
	defer c.Close()
	fmt.Fprint(c, "hello, gnet\n")
	line, _ := bufio.NewReader(c).ReadString('\n')
	fmt.Print(line)
	// Output: HELLO, GNET
}
