package main

import (
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
)

// servePprof serves the runtime profiles on addr for profiling a running
// server (go tool pprof http://ADDR/debug/pprof/profile). It is off unless
// --pprof-addr is given; bind it to loopback.
func servePprof(addr string, logger *slog.Logger) error {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("--pprof-addr %s: %w", addr, err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	logger.Info("pprof listening", "addr", l.Addr().String())
	go func() {
		if err := http.Serve(l, mux); err != nil {
			logger.Error("pprof server stopped", "err", err)
		}
	}()
	return nil
}
