package server_test

import (
	"bufio"
	"context"
	"fmt"
	"net"

	"github.com/shoalkv/shoal/eventloop"
	"github.com/shoalkv/shoal/kv"
	"github.com/shoalkv/shoal/server"
	"github.com/shoalkv/shoal/store"
)

// Example embeds the Redis-compatible server in a program: a store, the kv
// Handler behind the serving edge, and an eventloop server on a loopback port.
func Example() {
	st := store.New(store.Options{})
	defer st.Close()
	h := kv.New(st, kv.Options{})
	srv, err := eventloop.NewServer(server.New(h), eventloop.Options{Addr: "127.0.0.1:0"})
	if err != nil {
		panic(err)
	}
	if err := srv.Start(); err != nil {
		panic(err)
	}
	defer srv.Shutdown(context.Background())

	conn, err := net.Dial("tcp", srv.Addr().String())
	if err != nil {
		panic(err)
	}
	defer conn.Close()
	fmt.Fprint(conn, "SET greeting hello\r\nGET greeting\r\n")
	rd := bufio.NewReader(conn)
	for i := 0; i < 3; i++ {
		line, _ := rd.ReadString('\n')
		fmt.Printf("%q\n", line)
	}
	// Output:
	// "+OK\r\n"
	// "$5\r\n"
	// "hello\r\n"
}
