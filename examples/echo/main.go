// Command echo is a minimal eventloop server: it echoes every byte it
// receives. Copy it to start a new protocol.
//
//	go run ./examples/echo -addr 127.0.0.1:7000 -loops 2
//	# then connect with any TCP client, e.g. telnet 127.0.0.1 7000
//
// It doubles as a load target for the loop itself: a RESP command echoed
// back is a well-formed RESP reply, so redis-benchmark can drive it
// (redis-benchmark -p 7000 -t ping_mbulk -c 50 -P 1 -q) and the server's
// CPU per request compares with redis-server answering PING.
package main

import (
	"context"
	"flag"
	"log"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/shoalkv/shoal/eventloop"
)

// echo writes back everything it reads. A real protocol would parse `in`,
// answer each complete request and return how many bytes those took.
type echo struct{}

func (echo) OnTraffic(c *eventloop.Conn, in []byte) int {
	c.Write(in)
	return len(in)
}

func main() {
	addr := flag.String("addr", "127.0.0.1:7000", "listen address (host:port)")
	loops := flag.Int("loops", 0, "event loops (0: GOMAXPROCS)")
	flag.Parse()

	srv, err := eventloop.NewServer(echo{}, eventloop.Options{Addr: *addr, Loops: *loops})
	if err != nil {
		log.Fatal(err)
	}
	if err := srv.Start(); err != nil {
		log.Fatal(err)
	}
	log.Printf("echo listening on %s", srv.Addr())

	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	go func() {
		<-sig
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := srv.Shutdown(ctx); err != nil {
			log.Printf("shutdown: %v", err)
		}
	}()
	if err := srv.Serve(); err != nil {
		log.Fatal(err)
	}
}
