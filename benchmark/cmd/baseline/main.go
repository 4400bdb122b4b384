package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/shoalkv/shoal/benchmark/baseline"
)

type server interface{ Close() error }

func main() {
	fs := flag.NewFlagSet("baseline", flag.ContinueOnError)
	engine := fs.String("engine", "net", "networking model: net (goroutine per connection) or gnet (gnet v2 event loops)")
	addr := fs.String("addr", "127.0.0.1:7001", "listen `host:port`")
	if err := fs.Parse(os.Args[1:]); err != nil {
		os.Exit(2)
	}
	srv, err := listen(*engine, *addr, os.Stderr)
	if err != nil {
		fmt.Fprintln(os.Stderr, "baseline:", err)
		os.Exit(1)
	}
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	<-sig
	if err := srv.Close(); err != nil {
		fmt.Fprintln(os.Stderr, "baseline:", err)
		os.Exit(1)
	}
}

func listen(engine, addr string, log io.Writer) (server, error) {
	st := baseline.NewStore()
	switch engine {
	case "net":
		s, err := baseline.ListenNet(addr, st)
		if err != nil {
			return nil, err
		}
		fmt.Fprintf(log, "baseline: net server on %s\n", s.Addr())
		return s, nil
	case "gnet":
		s, err := baseline.ListenGnet(addr, st)
		if err != nil {
			return nil, err
		}
		fmt.Fprintf(log, "baseline: gnet server on %s\n", addr)
		return s, nil
	}
	return nil, fmt.Errorf("-engine %q: want net or gnet", engine)
}
