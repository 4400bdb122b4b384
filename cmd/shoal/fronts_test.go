package main

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/shoalkv/shoal/kv"
	"github.com/shoalkv/shoal/proto/frame"
	"github.com/shoalkv/shoal/server"
	"github.com/shoalkv/shoal/store"
)

func TestFrontPortFlags(t *testing.T) {
	c, err := parseConfig(nil, func(k string) string {
		return map[string]string{"SHOAL_HTTP_PORT": "8080", "SHOAL_FRAME_PORT": "9000"}[k]
	})
	if err != nil || c.Int("http-port") != 8080 || c.Int("frame-port") != 9000 {
		t.Fatalf("env: err %v", err)
	}
	if c, err := parseConfig(nil, func(string) string { return "" }); err != nil || c.Int("http-port") != 0 || c.Int("frame-port") != 0 {
		t.Fatalf("defaults: http %d frame %d (want 0: off) err %v", c.Int("http-port"), c.Int("frame-port"), err)
	}
	for _, bad := range [][]string{
		{"--http-port", "-1"}, {"--frame-port", "65536"}, {"--http-port", "x"},
		{"--port", "7000", "--http-port", "7000"}, {"--http-port", "7001", "--frame-port", "7001"},
	} {
		if _, err := parseConfig(bad, func(string) string { return "" }); err == nil {
			t.Errorf("parseConfig(%q) accepted", bad)
		}
	}
}

// TestBinaryServesEveryFront runs the binary with both fronts and a
// password: a key set over RESP is read over HTTP with the password, the
// HTTP front refuses without it, and the frame front refuses outright.
func TestBinaryServesEveryFront(t *testing.T) {
	httpPort, framePort := freePort(t), freePort(t)
	// The fronts need the native engine (one Server, several addresses), so
	// this test pins it even when CI runs the package again with
	// SHOAL_ENGINE=gnet.
	p := startBinary(t, "--engine", "native", "--http-port", strconv.Itoa(httpPort), "--frame-port", strconv.Itoa(framePort), "--requirepass", "pw")
	c := p.dial(t)
	c.SetDeadline(time.Now().Add(5 * time.Second))
	io.WriteString(c, "AUTH pw\r\nSET k from-resp\r\n")
	rd := bufio.NewReader(c)
	for _, want := range []string{"+OK\r\n", "+OK\r\n"} {
		if line, _ := rd.ReadString('\n'); line != want {
			t.Fatalf("RESP: %q", line)
		}
	}
	url := "http://127.0.0.1:" + strconv.Itoa(httpPort) + "/kv/k"
	get := func(auth string) (int, string) {
		req, _ := http.NewRequest("GET", url, nil)
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		resp, err := (&http.Client{Timeout: 5 * time.Second}).Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, body := get(""); code != 401 || strings.Contains(body, "from-resp") {
		t.Fatalf("HTTP without the password: %d %q", code, body)
	}
	if code, body := get("Bearer pw"); code != 200 || body != "from-resp" {
		t.Fatalf("HTTP with the password: %d %q", code, body)
	}
	fc, err := net.Dial("tcp", "127.0.0.1:"+strconv.Itoa(framePort))
	if err != nil {
		t.Fatal(err)
	}
	defer fc.Close()
	fc.SetDeadline(time.Now().Add(5 * time.Second))
	req, _ := frame.AppendGet(nil, []byte("k"))
	fc.Write(req)
	all, _ := io.ReadAll(fc)
	var resp frame.Response
	if _, err := (&frame.Decoder{}).DecodeResponse(all, &resp); err != nil || resp.Status != frame.StatusError || !strings.HasPrefix(string(resp.Value), "NOAUTH") {
		t.Fatalf("frame front with a password: %q %v", all, err)
	}
	p.terminate(t)
	if !strings.Contains(p.stderr.String(), "HTTP front listening") {
		t.Errorf("no HTTP front line in the log:\n%s", p.stderr.String())
	}
}

// TestFrontsBindLikeTheRESPPort: the fronts listen on --bind, in the order
// HTTP then frames, and only when their port is set.
func TestFrontsBindLikeTheRESPPort(t *testing.T) {
	st := store.New(store.Options{})
	defer st.Close()
	k := kv.New(st, kv.Options{})
	defer k.Close()
	edge := server.New(k)
	ls := fronts("::1", 8080, 9000, edge)
	if len(ls) != 2 || ls[0].Addr != "[::1]:8080" || ls[1].Addr != "[::1]:9000" {
		t.Fatalf("listeners %+v", ls)
	}
	if ls := fronts("0.0.0.0", 0, 9000, edge); len(ls) != 1 || ls[0].Addr != "0.0.0.0:9000" {
		t.Fatalf("frame only: %+v", ls)
	}
	if ls := fronts("127.0.0.1", 0, 0, edge); len(ls) != 0 {
		t.Fatalf("no ports, yet %+v", ls)
	}
}

// TestGnetEngineRefusesFronts: --engine gnet serves one address, so asking
// it for a front is a startup error that says so, not a server that
// silently lacks the port.
func TestGnetEngineRefusesFronts(t *testing.T) {
	cmd := exec.Command(shoalBin, "--port", strconv.Itoa(freePort(t)), "--engine", "gnet", "--http-port", strconv.Itoa(freePort(t)))
	out, err := cmd.CombinedOutput()
	if err == nil {
		t.Fatalf("shoal --engine gnet --http-port started:\n%s", out)
	}
	if !strings.Contains(string(out), "--http-port and --frame-port need --engine native") {
		t.Fatalf("error output does not say the gnet engine cannot serve the fronts:\n%s", out)
	}
}
