package kv_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/shoalkv/shoal/eventloop"
	"github.com/shoalkv/shoal/eventloop/gnetengine"
	"github.com/shoalkv/shoal/internal/redistest"
	"github.com/shoalkv/shoal/kv"
	"github.com/shoalkv/shoal/store"
)

// freePort asks the kernel for an unused loopback port.
func freePort(t testing.TB) int { return redistest.FreePort(t) }

// startRedis starts a real redis-server 7 without persistence and one
// database (Shoal's keyspace), and stops it by PID when the test ends.
func startRedis(t testing.TB, extra ...string) string {
	t.Helper()
	return redistest.StartServer(t, append([]string{"--databases", "1"}, extra...)...)
}

// waitPing reports whether addr answers PING (any reply: NOAUTH counts).
func waitPing(addr string, within time.Duration) bool { return redistest.WaitPing(addr, within) }

// shoalServer is an in-process Shoal: a kv.Handler on a real eventloop
// server listening on loopback.
type shoalServer struct {
	addr    string
	srv     *eventloop.Server
	handler *kv.Handler
	store   *store.Store
}

func startShoal(t testing.TB, o kv.Options, eo eventloop.Options) *shoalServer {
	t.Helper()
	eo.Engine = testEngine(t)
	st := store.New(store.Options{})
	h := kv.New(st, o)
	eo.Addr = "127.0.0.1:0"
	if eo.Loops == 0 {
		eo.Loops = 2
	}
	srv, err := eventloop.NewServer(h, eo)
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	s := &shoalServer{addr: srv.Addr().String(), srv: srv, handler: h, store: st}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := srv.Shutdown(ctx); err != nil && !errors.Is(err, eventloop.ErrServerClosed) {
			t.Errorf("shutdown: %v", err)
		}
		h.Close()
		st.Close()
	})
	return s
}

// testEngine is the eventloop engine the in-process servers of these tests
// run on: the native one, or gnet's with SHOAL_TEST_ENGINE=gnet (CI runs
// the package both ways).
func testEngine(t testing.TB) eventloop.Engine {
	switch e := os.Getenv("SHOAL_TEST_ENGINE"); e {
	case "", "native":
		return nil
	case "gnet":
		return gnetengine.Engine{}
	default:
		t.Fatalf("SHOAL_TEST_ENGINE=%q: want native or gnet", e)
		return nil
	}
}

// rawConn is a test client that sends RESP and returns each reply's raw
// bytes, so replies can be compared byte for byte.
type rawConn struct {
	t  testing.TB
	c  net.Conn
	rd *bufio.Reader
}

// readTimeout bounds each raw read and write: long enough for a reply that
// builds a 512 MiB string on a loaded machine under -race (5 s was not), short
// enough that a hang fails the test instead of the whole run.
const readTimeout = 30 * time.Second

func dialRaw(t testing.TB, addr string) *rawConn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return &rawConn{t: t, c: c, rd: bufio.NewReader(c)}
}

func encodeCommand(args []string) []byte {
	b := []byte("*" + strconv.Itoa(len(args)) + "\r\n")
	for _, a := range args {
		b = append(b, "$"+strconv.Itoa(len(a))+"\r\n"...)
		b = append(b, a...)
		b = append(b, "\r\n"...)
	}
	return b
}

func (r *rawConn) send(p []byte) {
	r.t.Helper()
	_ = r.c.SetWriteDeadline(time.Now().Add(readTimeout))
	if _, err := r.c.Write(p); err != nil {
		r.t.Fatalf("write: %v", err)
	}
}

// do sends one command and returns its raw reply.
func (r *rawConn) do(args ...string) string {
	r.t.Helper()
	r.send(encodeCommand(args))
	reply, err := r.read()
	if err != nil {
		r.t.Fatalf("%q: reading reply: %v", args, err)
	}
	return reply
}

// read returns one complete raw reply.
func (r *rawConn) read() (string, error) {
	_ = r.c.SetReadDeadline(time.Now().Add(readTimeout))
	var sb strings.Builder
	err := readReply(r.rd, &sb)
	return sb.String(), err
}

// readReply copies one (possibly nested) RESP2/RESP3 reply from rd to sb.
// It is independent of proto/resp so the tests do not trust the code under
// test to read its own output.
func readReply(rd *bufio.Reader, sb *strings.Builder) error {
	line, err := rd.ReadString('\n')
	if err != nil {
		return err
	}
	if len(line) < 3 || line[len(line)-2] != '\r' {
		return fmt.Errorf("malformed reply line %q", line)
	}
	sb.WriteString(line)
	body := line[1 : len(line)-2]
	switch line[0] {
	case '+', '-', ':', '_', ',', '#', '(':
		return nil
	case '$', '=', '!':
		n, err := strconv.Atoi(body)
		if err != nil {
			return fmt.Errorf("bad length in %q", line)
		}
		if n < 0 {
			return nil
		}
		buf := make([]byte, n+2)
		if _, err := io.ReadFull(rd, buf); err != nil {
			return err
		}
		sb.Write(buf)
		return nil
	case '*', '~', '>', '%', '|':
		n, err := strconv.Atoi(body)
		if err != nil {
			return fmt.Errorf("bad length in %q", line)
		}
		if line[0] == '%' || line[0] == '|' {
			n *= 2
		}
		for i := 0; i < n; i++ {
			if err := readReply(rd, sb); err != nil {
				return err
			}
		}
		return nil
	}
	return fmt.Errorf("unknown reply type in %q", line)
}

// readUntilClose returns everything the server sends until it closes.
func (r *rawConn) readUntilClose() (string, error) {
	_ = r.c.SetReadDeadline(time.Now().Add(readTimeout))
	b, err := io.ReadAll(r.rd)
	return string(b), err
}
