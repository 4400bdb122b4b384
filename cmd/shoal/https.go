package main

import (
	"crypto/tls"
	"errors"
	"fmt"
	"net"

	"github.com/shoalkv/shoal/config"
	"github.com/shoalkv/shoal/eventloop"
)

// The HTTP front over TLS: --http-tls-port serves the HTTP front's API on
// --bind with the certificate, key and client-certificate rules of the
// tls-* settings (the TLS port's; CONFIG SET tls-cert-file reloads both),
// offering HTTP/2 ("h2") by ALPN and HTTP/1.1 to clients without it.

// checkHTTPSPort checks that --http-tls-port differs from the other ports
// and runs on the native engine.
func checkHTTPSPort(params *config.Table) error {
	port := params.Int("http-tls-port")
	if port == 0 {
		return nil
	}
	if params.Get("engine") != "native" {
		return errors.New("--http-tls-port needs --engine native: the gnet engine has no TLS and serves one address")
	}
	for _, other := range []string{"port", "http-port", "frame-port"} {
		if params.Int(other) == port {
			return fmt.Errorf("--http-tls-port %d and --%s %d must differ", port, other, port)
		}
	}
	return nil
}

// withHTTPSPort adds the HTTPS listener when --http-tls-port is set. h is
// the RESP Handler, whose HTTPHandler serves the front.
func withHTTPSPort(params *config.Table, bind string, cfg *tls.Config, listeners []eventloop.Listener, h eventloop.Handler) []eventloop.Listener {
	port := params.Get("http-tls-port")
	edge, ok := h.(interface{ HTTPHandler() eventloop.Handler })
	if port == "0" || !ok {
		return listeners
	}
	https := withALPN(cfg, "h2", "http/1.1") // the same configs: a CONFIG SET reaches both ports
	return append(listeners, eventloop.Listener{Addr: net.JoinHostPort(bind, port), Handler: edge.HTTPHandler(), TLSConfig: https})
}
