package kv

import (
	"net"
	"testing"
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
