package eventloop

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/shoalkv/shoal/internal/procfs"
	"github.com/shoalkv/shoal/internal/tcptest"
)

// The benchmarks' clients can run in a child process (this test binary,
// re-executed with SHOAL_BENCH_CHILD set), so the server's memory and CPU
// figures are its own and the descriptors fit the per-process cap.
func TestMain(m *testing.M) {
	switch os.Getenv("SHOAL_BENCH_CHILD") {
	case "":
		os.Exit(m.Run())
	case "idle":
		os.Exit(childIdle())
	case "pipe":
		os.Exit(childPipe())
	case "idletls":
		os.Exit(childIdleTLS())
	}
	os.Exit(2)
}

// pingHandler answers every "PING\r\n" with "+PONG\r\n", RESP-style.
type pingHandler struct{}

func (pingHandler) OnTraffic(c *Conn, in []byte) int {
	out := c.OutputBuffer()
	consumed := 0
	for len(in)-consumed >= 6 {
		i := bytes.IndexByte(in[consumed:], '\n')
		if i < 0 {
			break
		}
		out = append(out, "+PONG\r\n"...)
		consumed += i + 1
	}
	c.SetOutputBuffer(out)
	return consumed
}

const pingDepth = 64

func BenchmarkPipelinedEcho(b *testing.B) {
	s := startServer(b, pingHandler{}, Options{Loops: 1})
	c := dial(b, s)
	req := bytes.Repeat([]byte("PING\r\n"), pingDepth)
	resp := make([]byte, 7*pingDepth)
	b.ReportAllocs()
	b.ResetTimer()
	for done := 0; done < b.N; done += pingDepth {
		if _, err := c.Write(req); err != nil {
			b.Fatal(err)
		}
		if _, err := io.ReadFull(c, resp); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	if !bytes.HasPrefix(resp, []byte("+PONG\r\n+PONG\r\n")) {
		b.Fatalf("bad reply %q", resp[:14])
	}
}

// startNetServer starts the goroutine-per-connection baseline: bufio in and out,
// flushing when the input runs dry, as a careful net server does.
func startNetServer(b *testing.B) *tcptest.Server {
	return tcptest.Serve(b, func(c net.Conn, _ int64) { serveNet(c) })
}

func serveNet(c net.Conn) {
	r, w := bufio.NewReader(c), bufio.NewWriter(c)
	for {
		line, err := r.ReadSlice('\n')
		if err != nil {
			return
		}
		if len(line) >= 6 {
			w.WriteString("+PONG\r\n")
		}
		if r.Buffered() == 0 {
			if w.Flush() != nil {
				return
			}
		}
	}
}

func rssBytes(b *testing.B) int64 {
	runtime.GC()
	debug.FreeOSMemory()
	rss, err := procfs.RSS(os.Getpid())
	if err != nil {
		b.Skipf("no resident set size: %v", err)
	}
	return rss
}

// startChild runs this test binary as a client with the given mode and
// arguments; it returns once the child prints its first line.
func startChild(b *testing.B, mode string, args ...string) (*exec.Cmd, io.WriteCloser, *bufio.Reader) {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "SHOAL_BENCH_CHILD="+mode, "SHOAL_BENCH_ARGS="+strings.Join(args, " "))
	cmd.Stderr = os.Stderr
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	r := bufio.NewReader(stdout)
	return cmd, stdin, r
}

func childArgs() []string { return strings.Fields(os.Getenv("SHOAL_BENCH_ARGS")) }

// childIdle opens n connections, reports "ready", and holds them until
// stdin closes.
func childIdle() int {
	a := childArgs()
	n, _ := strconv.Atoi(a[1])
	conns := make([]net.Conn, 0, n)
	for i := 0; i < n; i++ {
		c, err := net.Dial("tcp", a[0])
		if err != nil {
			fmt.Fprintln(os.Stderr, "dial:", err)
			return 1
		}
		conns = append(conns, c)
	}
	fmt.Println("ready")
	io.Copy(io.Discard, os.Stdin)
	for _, c := range conns {
		c.Close()
	}
	return 0
}

// childPipe sends total PINGs over conns connections, pingDepth at a time,
// and reports "done".
func childPipe() int {
	a := childArgs()
	conns, _ := strconv.Atoi(a[1])
	total, _ := strconv.Atoi(a[2])
	fmt.Println("started")
	var wg sync.WaitGroup
	failed := atomic.Bool{}
	for k := 0; k < conns; k++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := net.Dial("tcp", a[0])
			if err != nil {
				failed.Store(true)
				return
			}
			defer c.Close()
			req := bytes.Repeat([]byte("PING\r\n"), pingDepth)
			resp := make([]byte, 7*pingDepth)
			for done := 0; done < total/conns; done += pingDepth {
				if _, err := c.Write(req); err != nil {
					failed.Store(true)
					return
				}
				if _, err := io.ReadFull(c, resp); err != nil {
					failed.Store(true)
					return
				}
			}
		}()
	}
	wg.Wait()
	if failed.Load() {
		fmt.Println("failed")
		return 1
	}
	fmt.Println("done")
	return 0
}

// BenchmarkIdleConnMemory reports the server's resident memory per idle
// connection with 10,000 connections held by a child process, for shoal
// and for a goroutine-per-connection net server.
func BenchmarkIdleConnMemory(b *testing.B) {
	const n = 10000
	measure := func(b *testing.B, addr string, registered func() bool) {
		before := rssBytes(b)
		cmd, stdin, out := startChild(b, "idle", addr, strconv.Itoa(n))
		if line, err := out.ReadString('\n'); err != nil || line != "ready\n" {
			b.Fatalf("child: %q %v", line, err)
		}
		waitFor(b, "connections registered", registered)
		after := rssBytes(b)
		stdin.Close()
		cmd.Wait()
		b.ReportMetric(float64(after-before)/n, "B/conn")
	}
	b.Run("shoal", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			s := startServer(b, pingHandler{}, Options{})
			measure(b, s.Addr().String(), func() bool { return s.NumConns() == n })
			s.Shutdown(context.Background())
		}
	})
	b.Run("net", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			ns := startNetServer(b)
			measure(b, ns.Addr(), func() bool { return ns.Accepted() == n })
			ns.Close()
		}
	})
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkPipelinedThroughput runs the same pipelined PING load from a
// child process against shoal and against a goroutine-per-connection net
// server, reporting wall time and server CPU time per request.
func BenchmarkPipelinedThroughput(b *testing.B) {
	const conns = 8
	run := func(b *testing.B, addr string) {
		total := b.N
		if total < conns*pingDepth {
			total = conns * pingDepth
		}
		cmd, stdin, out := startChild(b, "pipe", addr, strconv.Itoa(conns), strconv.Itoa(total))
		defer stdin.Close()
		if line, _ := out.ReadString('\n'); line != "started\n" {
			b.Fatalf("child: %q", line)
		}
		cpu0 := cpuTime()
		b.ResetTimer()
		line, _ := out.ReadString('\n')
		b.StopTimer()
		cpu := cpuTime() - cpu0
		cmd.Wait()
		if line != "done\n" {
			b.Fatalf("child: %q", line)
		}
		reqs := total / conns / pingDepth * conns * pingDepth
		b.ReportMetric(float64(cpu.Nanoseconds())/float64(reqs), "ns-cpu/req")
	}
	b.Run("shoal", func(b *testing.B) {
		s := startServer(b, pingHandler{}, Options{})
		b.ReportAllocs()
		run(b, s.Addr().String())
	})
	b.Run("net", func(b *testing.B) {
		ns := startNetServer(b)
		defer ns.Close()
		b.ReportAllocs()
		run(b, ns.Addr())
	})
}
