package server_test

import (
	"bufio"
	"encoding/base64"
	"fmt"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/shoalkv/shoal/eventloop"
	"github.com/shoalkv/shoal/internal/shoaltest"
	"github.com/shoalkv/shoal/kv"
	"github.com/shoalkv/shoal/proto/frame"
	"github.com/shoalkv/shoal/store"
)

func storeSetOptions() store.SetOptions { return store.SetOptions{} }
func base64Std(s string) string         { return base64.StdEncoding.EncodeToString([]byte(s)) }

// frameConn is a test client of the frame front.
type frameConn struct {
	c   net.Conn
	rd  *bufio.Reader
	dec frame.Decoder
}

func dialFrame(t testing.TB, addr string) *frameConn {
	t.Helper()
	rc := shoaltest.Dial(t, addr)
	return &frameConn{c: rc.C, rd: rc.Rd}
}

func frameGet(key string) []byte {
	b, _ := frame.AppendGet(nil, []byte(key))
	return b
}

func frameSet(key, value string) []byte {
	b, _ := frame.AppendSet(nil, []byte(key), []byte(value))
	return b
}

func frameDel(key string) []byte {
	b, _ := frame.AppendDel(nil, []byte(key))
	return b
}

// read reads one response frame.
func (f *frameConn) read(t testing.TB) (frame.Status, string, error) {
	t.Helper()
	f.c.SetReadDeadline(time.Now().Add(5 * time.Second))
	hdr := make([]byte, frame.ResponseHeaderLen)
	if _, err := io.ReadFull(f.rd, hdr); err != nil {
		return 0, "", err
	}
	n := int(hdr[1])<<24 | int(hdr[2])<<16 | int(hdr[3])<<8 | int(hdr[4])
	buf := append(hdr, make([]byte, n)...)
	if _, err := io.ReadFull(f.rd, buf[frame.ResponseHeaderLen:]); err != nil {
		return 0, "", err
	}
	var resp frame.Response
	if _, err := f.dec.DecodeResponse(buf, &resp); err != nil {
		t.Fatalf("malformed response %q: %v", buf, err)
	}
	return resp.Status, string(resp.Value), nil
}

// do sends one request and reads its response.
func (f *frameConn) do(t testing.TB, req []byte) (frame.Status, string) {
	t.Helper()
	if _, err := f.c.Write(req); err != nil {
		t.Fatal(err)
	}
	st, v, err := f.read(t)
	if err != nil {
		t.Fatal(err)
	}
	return st, v
}

// expectClosed checks that the server closed the connection.
func (f *frameConn) expectClosed(t testing.TB) {
	t.Helper()
	f.c.SetReadDeadline(time.Now().Add(5 * time.Second))
	if n, err := f.rd.Read(make([]byte, 1)); err != io.EOF {
		t.Fatalf("connection still open: read %d, %v", n, err)
	}
}

func TestFrameFront(t *testing.T) {
	f := startFronts(t, kv.Options{}, eventloop.Options{}, "")
	fc := dialFrame(t, f.frame)
	ping, _ := frame.AppendPing(nil, []byte("hi"))
	for _, s := range []struct {
		req    []byte
		status frame.Status
		value  string
	}{
		{ping, frame.StatusOK, "hi"},
		{frameGet("k"), frame.StatusNotFound, ""},
		{frameSet("k", "v"), frame.StatusOK, ""},
		{frameGet("k"), frame.StatusOK, "v"},
		{frameSet("", "empty key"), frame.StatusOK, ""},
		{frameGet(""), frame.StatusOK, "empty key"},
		{frameDel("k"), frame.StatusOK, ""},
		{frameDel("k"), frame.StatusNotFound, ""},
	} {
		if st, v := fc.do(t, s.req); st != s.status || v != s.value {
			t.Fatalf("%q: %v %q, want %v %q", s.req, st, v, s.status, s.value)
		}
	}
	// A SET over maxmemory answers ERROR with Redis's OOM text, and the
	// connection stays usable.
	f.store.SetMaxMemory(1)
	if st, v := fc.do(t, frameSet("big", "value")); st != frame.StatusError || !strings.HasPrefix(v, "OOM command not allowed") {
		t.Fatalf("SET over maxmemory: %v %q", st, v)
	}
	if st, _ := fc.do(t, ping); st != frame.StatusOK {
		t.Fatal("PING after an ERROR reply failed")
	}
}

// TestFramePipelined sends 1000 requests in one write and reads 1000
// responses in order, including values bigger than a read buffer.
func TestFramePipelined(t *testing.T) {
	f := startFronts(t, kv.Options{}, eventloop.Options{}, "")
	fc := dialFrame(t, f.frame)
	big := strings.Repeat("b", 200<<10)
	var batch []byte
	const n = 1000
	for i := 0; i < n; i++ {
		v := fmt.Sprint("v", i)
		if i%100 == 0 {
			v = big
		}
		batch = append(batch, frameSet(fmt.Sprint("k", i), v)...)
		batch = append(batch, frameGet(fmt.Sprint("k", i))...)
	}
	go fc.c.Write(batch)
	for i := 0; i < n; i++ {
		want := fmt.Sprint("v", i)
		if i%100 == 0 {
			want = big
		}
		if st, _, err := fc.read(t); err != nil || st != frame.StatusOK {
			t.Fatalf("SET %d: %v %v", i, st, err)
		}
		if st, v, err := fc.read(t); err != nil || st != frame.StatusOK || v != want {
			t.Fatalf("GET %d: %v %d bytes %v", i, st, len(v), err)
		}
	}
}

// TestFrameMalformedClosesWithError: the replies before a malformed frame
// are sent, then an ERROR naming the problem, then the close.
func TestFrameMalformedClosesWithError(t *testing.T) {
	f := startFronts(t, kv.Options{}, eventloop.Options{}, "")
	for _, tc := range []struct {
		name string
		bad  []byte
		want string
	}{
		{"unknown opcode", []byte{9, 0, 0, 0, 0, 0, 0}, "unknown opcode 9"},
		{"value on GET", []byte{1, 0, 1, 0, 0, 0, 3, 'k', 'v', 'v', 'v'}, "GET request carries a 3-byte value"},
		{"value too long", []byte{2, 0, 1, 0xff, 0xff, 0xff, 0xff}, "value length 4294967295 exceeds limit 16777216"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fc := dialFrame(t, f.frame)
			ping, _ := frame.AppendPing(nil, []byte("before"))
			fc.c.Write(append(append(ping, tc.bad...), ping...))
			if st, v, err := fc.read(t); err != nil || st != frame.StatusOK || v != "before" {
				t.Fatalf("reply before the bad frame: %v %q %v", st, v, err)
			}
			st, v, err := fc.read(t)
			if err != nil || st != frame.StatusError || !strings.Contains(v, tc.want) {
				t.Fatalf("got %v %q %v, want ERROR with %q", st, v, err, tc.want)
			}
			fc.expectClosed(t)
		})
	}
}

// TestFrameRefusesWithRequirePass: the frame protocol cannot carry a
// password, so with one set it serves nothing, also when it is set after
// the connection opened.
func TestFrameRefusesWithRequirePass(t *testing.T) {
	f := startFronts(t, kv.Options{RequirePass: "pw"}, eventloop.Options{}, "")
	f.store.Set(nil, []byte("k"), []byte("secret"), store.SetOptions{})
	fc := dialFrame(t, f.frame)
	fc.c.Write(frameGet("k"))
	st, v, err := fc.read(t)
	if err != nil || st != frame.StatusError || !strings.HasPrefix(v, "NOAUTH") {
		t.Fatalf("got %v %q %v, want ERROR NOAUTH", st, v, err)
	}
	fc.expectClosed(t)

	open := startFronts(t, kv.Options{}, eventloop.Options{}, "")
	fc = dialFrame(t, open.frame)
	if st, _ := fc.do(t, frameSet("k", "v")); st != frame.StatusOK {
		t.Fatal("SET without a password")
	}
	if r := dialRaw(t, open.resp).Do("CONFIG", "SET", "requirepass", "pw"); r != "+OK\r\n" {
		t.Fatal(r)
	}
	fc.c.Write(frameGet("k"))
	if st, v, err := fc.read(t); err != nil || st != frame.StatusError || !strings.HasPrefix(v, "NOAUTH") {
		t.Fatalf("after CONFIG SET requirepass: %v %q %v, want ERROR NOAUTH", st, v, err)
	}
	fc.expectClosed(t)
}

// TestFrontsProtectedMode: protected mode applies to every front; a client
// from another host is refused on each, and a password or protected-mode
// no lets it in where the protocol can present one.
func TestFrontsProtectedMode(t *testing.T) {
	remote := remoteAddress(t)
	dialFrom := func(addr string) net.Conn {
		d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(remote)}, Timeout: 5 * time.Second}
		c, err := d.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		c.SetDeadline(time.Now().Add(5 * time.Second))
		return c
	}
	local := func(f *fronts, a string) string {
		_, port, _ := net.SplitHostPort(a)
		return remote + ":" + port
	}
	f := startFronts(t, kv.Options{}, eventloop.Options{}, "0.0.0.0")
	f.store.Set(nil, []byte("k"), []byte("secret"), store.SetOptions{})

	c := dialFrom(local(f, f.http))
	io.WriteString(c, "GET /kv/k HTTP/1.1\r\nHost: h\r\n\r\n")
	all, _ := io.ReadAll(c)
	if !strings.HasPrefix(string(all), "HTTP/1.1 403 ") || !strings.Contains(string(all), "protected mode") || strings.Contains(string(all), "secret") {
		t.Fatalf("HTTP from another host: %.200q", all)
	}

	c = dialFrom(local(f, f.frame))
	c.Write(frameGet("k"))
	all, _ = io.ReadAll(c)
	if len(all) < 5 || all[0] != byte(frame.StatusError) || !strings.Contains(string(all), "protected mode") {
		t.Fatalf("frame from another host: %.200q", all)
	}

	// With protected-mode no, the remote client is served.
	dialRaw(t, "127.0.0.1:"+portOf(f.resp)).Do("CONFIG", "SET", "protected-mode", "no")
	c = dialFrom(local(f, f.http))
	io.WriteString(c, "GET /kv/k HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n")
	all, _ = io.ReadAll(c)
	if !strings.HasPrefix(string(all), "HTTP/1.1 200 ") || !strings.HasSuffix(string(all), "secret") {
		t.Fatalf("HTTP from another host with protected-mode no: %.200q", all)
	}
}

func portOf(addr string) string {
	_, p, _ := net.SplitHostPort(addr)
	return p
}
