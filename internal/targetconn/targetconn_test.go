package targetconn

import (
	"net"
	"strings"
	"testing"
	"time"

	"github.com/shoalkv/shoal/internal/tcptest"
)

// serve answers each connection to a loopback listener with out once it
// has read anything, then reads until the client closes; it returns the
// address.
func serve(t *testing.T, out string) string {
	t.Helper()
	return tcptest.Serve(t, func(c net.Conn, _ int64) {
		buf := make([]byte, 1<<16)
		if _, err := c.Read(buf); err != nil {
			return
		}
		_, _ = c.Write([]byte(out))
		for {
			if _, err := c.Read(buf); err != nil {
				return
			}
		}
	}).Addr()
}

func dial(t *testing.T, addr string) *Conn {
	t.Helper()
	host, port, _ := net.SplitHostPort(addr)
	c, err := Dial(host, port, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func TestReadLineKeepsAtMostRedisBuffer(t *testing.T) {
	long := "-ERR " + strings.Repeat("x", 5000)
	c := dial(t, serve(t, "+OK\r\n"+long+"\r\n\r\n"))
	if err := c.Write([]byte("PING\r\n"), time.Second); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"+OK", long[:lineMax-1]} {
		line, err := c.ReadLine(time.Second)
		if err != nil || string(line) != want {
			t.Fatalf("ReadLine = %q (%d bytes) %v, want %d bytes", line, len(line), err, len(want))
		}
	}
	if _, err := c.ReadLine(time.Second); err != ErrEmptyLine {
		t.Fatalf("an empty line: %v, want ErrEmptyLine", err)
	}
}

func TestReadLineTimesOut(t *testing.T) {
	c := dial(t, serve(t, ""))
	start := time.Now()
	_, err := c.ReadLine(100 * time.Millisecond)
	if !IsTimeout(err) || time.Since(start) > 2*time.Second {
		t.Fatalf("ReadLine from a silent peer: %v after %v", err, time.Since(start))
	}
}

func TestDialRefusedIsAWriteErrorForRedis(t *testing.T) {
	l, _ := net.Listen("tcp", "127.0.0.1:0")
	_, port, _ := net.SplitHostPort(l.Addr().String())
	l.Close()
	_, err := Dial("127.0.0.1", port, time.Second)
	if err == nil || !RefusedAfterConnect(err) {
		t.Fatalf("dial to a closed port: %v", err)
	}
	if _, err := Dial("no-such-host.invalid", "1", time.Second); err == nil || RefusedAfterConnect(err) {
		t.Fatalf("dial to a name that does not resolve: %v", err)
	}
}

func TestAtoiIsCs(t *testing.T) {
	for in, want := range map[string]int{"6379": 6379, " 12x": 12, "x": 0, "-5": -5, "+7": 7, "": 0} {
		if got := Atoi(in); got != want {
			t.Errorf("Atoi(%q) = %d, want %d", in, got, want)
		}
	}
}

func TestCacheTakesPutsAndBounds(t *testing.T) {
	var c Cache
	key := Key{Owner: t, Addr: "a"}
	if c.Take(key) != nil {
		t.Fatal("an empty cache gave a connection")
	}
	conn := dial(t, serve(t, ""))
	c.Put(key, conn)
	if got := c.Take(key); got != conn {
		t.Fatalf("Take = %p, want %p", got, conn)
	}
	if c.Take(key) != nil {
		t.Fatal("a connection taken twice")
	}
	c.Put(key, conn)
	other := dial(t, serve(t, ""))
	c.Put(key, other) // one is cached already: other is closed
	if got := c.Take(key); got != conn {
		t.Fatal("a second Put replaced the cached connection")
	}
	for i := 0; i < MaxCached+3; i++ {
		c.Put(Key{Owner: t, Addr: strings.Repeat("k", i+1)}, dial(t, serve(t, "")))
	}
	if n := c.Len(); n != MaxCached {
		t.Fatalf("the cache holds %d connections, want at most %d", n, MaxCached)
	}
}
