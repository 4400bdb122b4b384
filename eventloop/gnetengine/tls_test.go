package gnetengine_test

import (
	"crypto/tls"
	"strings"
	"testing"

	"github.com/shoalkv/shoal/eventloop"
	"github.com/shoalkv/shoal/eventloop/gnetengine"
)

// TestTLSNeedsTheNativeEngine: the gnet engine has no TLS, and says so
// instead of serving a TLS port in plaintext.
func TestTLSNeedsTheNativeEngine(t *testing.T) {
	_, err := eventloop.NewServer(echo{}, eventloop.Options{Addr: "127.0.0.1:0", Engine: gnetengine.Engine{},
		TLSConfig: &tls.Config{Certificates: []tls.Certificate{{}}}})
	if err == nil || !strings.Contains(err.Error(), "TLS") || !strings.Contains(err.Error(), "native engine") {
		t.Fatalf("NewServer with the gnet engine and a TLSConfig: error %v", err)
	}
}
