package server

import (
	"net"
	"testing"
	"unsafe"
)

func TestPeerIsLocal(t *testing.T) {
	for _, tc := range []struct {
		addr net.Addr
		want bool
	}{
		{&net.TCPAddr{IP: net.ParseIP("127.0.0.1")}, true},
		{&net.TCPAddr{IP: net.ParseIP("127.3.4.5")}, true},
		{&net.TCPAddr{IP: net.ParseIP("::1")}, true},
		{&net.TCPAddr{IP: net.ParseIP("::ffff:127.0.0.1")}, true},
		{&net.UnixAddr{Name: "/tmp/s.sock", Net: "unix"}, true},
		{nil, true},
		{&net.TCPAddr{IP: net.ParseIP("10.1.2.3")}, false},
		{&net.TCPAddr{IP: net.ParseIP("192.168.0.7")}, false},
		{&net.TCPAddr{IP: net.ParseIP("::ffff:10.0.0.1")}, false},
		{&net.TCPAddr{IP: net.ParseIP("fe80::1")}, false},
		{&net.TCPAddr{IP: net.ParseIP("0.0.0.0")}, false},
	} {
		if got := peerIsLocal(tc.addr); got != tc.want {
			t.Errorf("peerIsLocal(%v) = %v, want %v", tc.addr, got, tc.want)
		}
	}
}

// TestSessionFitsItsSizeClass: every RESP connection allocates one
// session (the kv.Client and its Conn pointer); past 240 bytes it moves to
// the 256-byte allocation class, 16 bytes more per connection at 100k
// connections. Grow it only on purpose.
func TestSessionFitsItsSizeClass(t *testing.T) {
	if n := unsafe.Sizeof(session{}); n > 240 {
		t.Errorf("session is %d bytes, over the 240-byte size class", n)
	}
}
