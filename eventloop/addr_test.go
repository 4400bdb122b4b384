package eventloop

import "testing"

// addrKeeper asks for both addresses in OnOpen and again in OnClose, after the peer
// has gone: the addresses asked for once stay available.
type addrKeeper struct {
	lineEcho
	open, closed chan [2]string
}

func (h *addrKeeper) OnOpen(c *Conn) {
	h.open <- [2]string{c.LocalAddr().String(), c.RemoteAddr().String()}
}

func (h *addrKeeper) OnClose(c *Conn, err error) {
	var got [2]string
	if a := c.LocalAddr(); a != nil {
		got[0] = a.String()
	}
	if a := c.RemoteAddr(); a != nil {
		got[1] = a.String()
	}
	h.closed <- got
}

func TestAddressesAskedForOutliveThePeer(t *testing.T) {
	h := &addrKeeper{open: make(chan [2]string, 1), closed: make(chan [2]string, 1)}
	s := startServer(t, h, Options{Addr: "127.0.0.1:0"})
	c := dial(t, s)
	open := <-h.open
	if open[0] != c.RemoteAddr().String() || open[1] != c.LocalAddr().String() {
		t.Fatalf("server sees local %s remote %s; client is %s → %s", open[0], open[1], c.LocalAddr(), c.RemoteAddr())
	}
	c.Close()
	if closed := <-h.closed; closed != open {
		t.Errorf("in OnClose: %v, want %v", closed, open)
	}
}
