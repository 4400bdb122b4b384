package server_test

import (
	"net"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/shoalkv/shoal/internal/logtest"
	"github.com/shoalkv/shoal/internal/shoaltest"
	"github.com/shoalkv/shoal/kv"
)

// Slow consumers: client-output-buffer-limit by class, as redis-server
// applies it, on the engine SHOAL_TEST_ENGINE names.

// stalledSubscriber connects with a 4 KiB receive buffer, names itself,
// optionally switches to RESP3, subscribes to channel, reads the
// confirmations and then never reads again.
func stalledSubscriber(t *testing.T, addr, name, channel string, resp3 bool) net.Conn {
	t.Helper()
	d := net.Dialer{Control: func(_, _ string, rc syscall.RawConn) error {
		var serr error
		if err := rc.Control(func(fd uintptr) {
			serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4096)
		}); err != nil {
			return err
		}
		return serr
	}}
	c, err := d.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	req := "CLIENT SETNAME " + name + "\r\n"
	if resp3 {
		req = "HELLO 3\r\n" + req
	}
	req += "SUBSCRIBE " + channel + "\r\n"
	if _, err := c.Write([]byte(req)); err != nil {
		t.Fatal(err)
	}
	// Read until the subscribe confirmation has arrived.
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	var got []byte
	buf := make([]byte, 4096)
	for !strings.Contains(string(got), channel+"\r\n:1\r\n") {
		n, err := c.Read(buf)
		if err != nil {
			t.Fatalf("subscribing %s: %v (read %q)", name, err, got)
		}
		got = append(got, buf[:n]...)
	}
	return c
}

func numsub(t *testing.T, ctl *shoaltest.RawConn, channel string) int {
	t.Helper()
	r := ctl.Do("PUBSUB", "NUMSUB", channel)
	m := regexp.MustCompile(`:(\d+)\r\n$`).FindStringSubmatch(r)
	if m == nil {
		t.Fatalf("PUBSUB NUMSUB: %q", r)
	}
	n, _ := strconv.Atoi(m[1])
	return n
}

// clientField returns a field of the CLIENT LIST line of the client
// named name, "" if there is none.
func clientField(t *testing.T, ctl *shoaltest.RawConn, name, field string) string {
	t.Helper()
	for _, line := range strings.Split(ctl.Do("CLIENT", "LIST"), "\n") {
		if !strings.Contains(line, " name="+name+" ") {
			continue
		}
		for _, f := range strings.Fields(line) {
			if v, ok := strings.CutPrefix(f, field+"="); ok {
				return v
			}
		}
	}
	return ""
}

// TestStalledSubscriberClosedAtPubsubHardLimit: a RESP3 subscriber (pubsub
// class, as in Redis, whatever its protocol) that stops reading is closed
// once about the pubsub hard limit waits for it; CLIENT LIST shows its
// backlog as omem while it waits; the close is logged once with its name,
// address, class and the bytes pending; the publisher never waits.
func TestStalledSubscriberClosedAtPubsubHardLimit(t *testing.T) {
	var log logtest.Log
	s, ctl := startConfigured(t, shoaltest.Options{KV: kv.Options{Logger: log.Logger()}}, "client-output-buffer-limit", "pubsub 2mb 0 0")
	const limit = 2 << 20
	sub := stalledSubscriber(t, s.Addr, "stalled", "feed", true)
	subID := clientField(t, ctl, "stalled", "id")
	pub := shoaltest.Dial(t, s.Addr)
	msg := strings.Repeat("m", 100<<10)
	sent, sawOmem := 0, false
	start := time.Now()
	for numsub(t, ctl, "feed") == 1 {
		if r := pub.Do("PUBLISH", "feed", msg); r != ":1\r\n" && r != ":0\r\n" {
			t.Fatalf("PUBLISH: %q", r)
		}
		sent += len(msg)
		if omem, _ := strconv.Atoi(clientField(t, ctl, "stalled", "omem")); omem > limit/2 && !sawOmem {
			sawOmem = true
			// INFO counts the subscriber's buffers as Redis does.
			info := ctl.Do("INFO", "clients") + ctl.Do("INFO", "memory")
			for _, f := range []string{"client_recent_max_output_buffer", "mem_clients_normal"} {
				if n := infoInt(info, f); n < int64(omem)/2 {
					t.Errorf("INFO %s is %d while a subscriber has %d bytes pending", f, n, omem)
				}
			}
		}
		if sent > 20*limit {
			t.Fatalf("the stalled subscriber is still subscribed after %d MB published", sent>>20)
		}
	}
	if !sawOmem {
		t.Error("CLIENT LIST never showed the stalled subscriber's backlog in omem")
	}
	// What the kernel's socket buffers took (a few MB on loopback) is
	// not pending; the log says what was.
	if sent < limit || sent > limit+8<<20 {
		t.Errorf("closed after %d bytes published, want past the %d-byte limit, by no more than the socket buffers", sent, limit)
	}
	t.Logf("closed after %d bytes published in %v", sent, time.Since(start))
	_ = sub.SetReadDeadline(time.Now().Add(10 * time.Second))
	buf := make([]byte, 64<<10)
	for {
		if _, err := sub.Read(buf); err != nil {
			if ne, ok := err.(net.Error); ok && ne.Timeout() {
				t.Fatal("the subscriber's socket stayed open after its close")
			}
			break
		}
	}
	waitLog(t, &log, "overcoming of output buffer limits")
	line := log.String()
	if n := strings.Count(line, "stalled"); n != 1 {
		t.Errorf("the close is logged %d times, want once:\n%s", n, line)
	}
	m := regexp.MustCompile(`(\d+) bytes pending`).FindStringSubmatch(line)
	if m == nil {
		t.Fatalf("the log does not say how much was pending:\n%s", line)
	}
	// PUBLISH checks the subscriber's mailbox and its connection's backlog
	// together, so the close comes with the message that takes them past
	// the limit. The mail chunk the subscriber's loop is copying from one
	// to the other at that moment is in neither (kv/mailbox.go), so the
	// check before may have seen up to a chunk less than was pending: how
	// often depends on where that loop is when the publisher checks, which
	// load shifts.
	const mailChunk = 32 << 10
	if pending, _ := strconv.Atoi(m[1]); pending <= limit || pending > limit+len(msg)+mailChunk {
		t.Errorf("closed with %d bytes pending, want past the %d-byte limit by at most a message and a %d-byte mail chunk", pending, limit, mailChunk)
	}
	for _, want := range []string{"name=stalled", "class=pubsub", "addr=" + sub.LocalAddr().String(), "bytes pending", "limit 2097152", "id=" + subID} {
		if !strings.Contains(line, want) {
			t.Errorf("log lacks %q:\n%s", want, line)
		}
	}
	if r := pub.Do("PUBLISH", "feed", "after"); r != ":0\r\n" {
		t.Errorf("PUBLISH after the close: %q", r)
	}
	if n := gathered(t, s, "shoal_client_output_limit_closes_total", "pubsub"); n != 1 {
		t.Errorf("/metrics counts %v pubsub clients closed at the limit, want 1", n)
	}
}

// gathered is the value of the metric name with the label value label
// (or with no label when label is ""), from the edge's collector.
func gathered(t *testing.T, s *shoaltest.Server, name, label string) float64 {
	t.Helper()
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(s.Edge.MetricsCollector())
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			if label == "" || (len(m.GetLabel()) > 0 && m.GetLabel()[0].GetValue() == label) {
				if c := m.GetCounter(); c != nil {
					return c.GetValue()
				}
				return m.GetGauge().GetValue()
			}
		}
	}
	t.Fatalf("no metric %s{%s}", name, label)
	return 0
}

// TestStalledSubscriberClosedAfterSoftLimitSeconds: above the soft limit a
// subscriber has soft-seconds to catch up; then it is closed.
func TestStalledSubscriberClosedAfterSoftLimitSeconds(t *testing.T) {
	var log logtest.Log
	s, ctl := startConfigured(t, shoaltest.Options{KV: kv.Options{Logger: log.Logger()}}, "client-output-buffer-limit", "pubsub 0 1mb 1")
	stalledSubscriber(t, s.Addr, "soft", "feed", false)
	pub := shoaltest.Dial(t, s.Addr)
	msg := strings.Repeat("m", 64<<10)
	start := time.Now()
	// 16 MB: over the soft limit beyond what the kernel's socket buffers
	// take (they grow to a few MB on loopback, and are not pending).
	for i := 0; i < 256; i++ {
		pub.Do("PUBLISH", "feed", msg)
	}
	// On a loaded machine publishing 16 MB may take longer than the soft
	// limit's second, and the subscriber is already gone: then the log
	// and the timing below are what is checked.
	if v := clientField(t, ctl, "soft", "omem"); v != "" {
		if omem, _ := strconv.Atoi(v); omem < 1<<20 {
			t.Fatalf("16 MB published and the subscriber's omem is %d, under the soft limit", omem)
		}
	}
	for numsub(t, ctl, "feed") == 1 {
		if time.Since(start) > 15*time.Second {
			t.Fatal("still subscribed 15 s over a soft limit of 1 s")
		}
		pub.Do("PUBLISH", "feed", "x") // the limits are checked as output is added
		time.Sleep(20 * time.Millisecond)
	}
	// It passed the soft limit after start, so it may close 1 s after
	// start at the earliest.
	if took := time.Since(start); took < time.Second {
		t.Errorf("closed %v after publishing began, before the soft limit's 1 s", took)
	}
	waitLog(t, &log, "overcoming of output buffer limits")
	if !strings.Contains(log.String(), "soft limit 1048576") {
		t.Errorf("the log does not name the soft limit:\n%s", log.String())
	}
}

// TestUnsubscribedClientIsNormalAgain: the class follows the client. With
// a tiny pubsub limit and none for normal clients, a client that
// subscribed and unsubscribed gets a large reply it reads slowly, and is
// not closed.
func TestUnsubscribedClientIsNormalAgain(t *testing.T) {
	s, ctl := startConfigured(t, shoaltest.Options{}, "client-output-buffer-limit", "pubsub 64kb 0 0")
	big := strings.Repeat("v", 512<<10)
	ctl.Do("SET", "big", big)
	c := shoaltest.Dial(t, s.Addr)
	c.Do("SUBSCRIBE", "x")
	if r := c.Do("UNSUBSCRIBE", "x"); !strings.Contains(r, ":0\r\n") {
		t.Fatalf("UNSUBSCRIBE: %q", r)
	}
	var req []byte
	for i := 0; i < 8; i++ {
		req = append(req, shoaltest.EncodeCommand([]string{"GET", "big"})...)
	}
	c.Send(req) // 4 MB of replies, more than 64 KiB pending for a while
	for i := 0; i < 8; i++ {
		r, err := c.Read()
		if err != nil || len(r) < len(big) {
			t.Fatalf("GET %d after UNSUBSCRIBE: %d bytes, %v (closed as a subscriber?)", i, len(r), err)
		}
	}
}

// TestMaxmemoryClientsEvictsTheLargest: with maxmemory-clients set and no
// per-class limit, the stalled subscriber holding the most is closed once
// all clients' buffers pass it; INFO counts it in evicted_clients.
func TestMaxmemoryClientsEvictsTheLargest(t *testing.T) {
	var log logtest.Log
	s, ctl := startConfigured(t, shoaltest.Options{KV: kv.Options{Logger: log.Logger()}},
		"client-output-buffer-limit", "pubsub 0 0 0", "maxmemory-clients", "4mb")
	stalledSubscriber(t, s.Addr, "big", "a", false)
	stalledSubscriber(t, s.Addr, "small", "b", false)
	pub := shoaltest.Dial(t, s.Addr)
	msg := strings.Repeat("m", 100<<10)
	for i := 0; i < 5; i++ { // 500 KB to the small one
		pub.Do("PUBLISH", "b", msg)
	}
	publishUntilGone(t, ctl, pub, "a", msg, "no client was evicted 20 s after all clients' buffers passed maxmemory-clients")
	if numsub(t, ctl, "b") != 1 {
		t.Error("the smaller subscriber was evicted too")
	}
	if info := ctl.Do("INFO", "stats"); !strings.Contains(info, "evicted_clients:1\r\n") {
		t.Errorf("INFO stats lacks evicted_clients:1:\n%s", info)
	}
	if n := gathered(t, s, "shoal_evicted_clients_total", ""); n != 1 {
		t.Errorf("/metrics counts %v evicted clients, want 1", n)
	}
	waitLog(t, &log, "maxmemory-clients")
	if !strings.Contains(log.String(), "name=big") {
		t.Errorf("the eviction log does not name the client:\n%s", log.String())
	}
}

// TestClientBuffersCountAgainstMaxmemory: as in Redis, a stalled
// subscriber's output counts in used_memory and against maxmemory, so
// under noeviction writes fail with OOM while it holds the memory and
// succeed once it is gone.
func TestClientBuffersCountAgainstMaxmemory(t *testing.T) {
	s, ctl := startConfigured(t, shoaltest.Options{}, "client-output-buffer-limit", "pubsub 0 0 0", "maxmemory", "8mb")
	sub := stalledSubscriber(t, s.Addr, "hog", "a", false)
	pub := shoaltest.Dial(t, s.Addr)
	msg := strings.Repeat("m", 100<<10)
	for i := 0; i < 200; i++ { // 20 MB, beyond the socket buffers
		pub.Do("PUBLISH", "a", msg)
	}
	deadline := time.Now().Add(10 * time.Second)
	for r := ctl.Do("SET", "k", "v"); !strings.HasPrefix(r, "-OOM"); r = ctl.Do("SET", "k", "v") {
		if time.Now().After(deadline) {
			t.Fatalf("SET with 20 MB pending for a subscriber under maxmemory 8mb: %q, want OOM", r)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if used := infoInt(ctl.Do("INFO", "memory"), "used_memory"); used < 8<<20 {
		t.Errorf("INFO used_memory %d does not count the subscriber's output", used)
	}
	sub.Close()
	deadline = time.Now().Add(10 * time.Second)
	for r := ctl.Do("SET", "k", "v"); r != "+OK\r\n"; r = ctl.Do("SET", "k", "v") {
		if time.Now().After(deadline) {
			t.Fatalf("SET after the subscriber left: %q", r)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// startConfigured starts a Shoal and CONFIG SETs each parameter and value
// of config through a control connection, which it returns with the server.
func startConfigured(t *testing.T, o shoaltest.Options, config ...string) (*shoaltest.Server, *rawConn) {
	t.Helper()
	s := shoaltest.Start(t, o)
	ctl := shoaltest.Dial(t, s.Addr)
	for i := 0; i+1 < len(config); i += 2 {
		if r := ctl.Do("CONFIG", "SET", config[i], config[i+1]); r != "+OK\r\n" {
			t.Fatalf("CONFIG SET %s %q: %q", config[i], config[i+1], r)
		}
	}
	return s, ctl
}

// publishUntilGone publishes msg to channel until its subscriber is closed,
// failing the test with failure if that takes more than 20 s.
func publishUntilGone(t *testing.T, ctl, pub *rawConn, channel, msg, failure string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for numsub(t, ctl, channel) == 1 {
		if time.Now().After(deadline) {
			t.Fatal(failure)
		}
		pub.Do("PUBLISH", channel, msg)
	}
}

func infoInt(info, field string) int64 {
	m := regexp.MustCompile(field + `:(\d+)\r\n`).FindStringSubmatch(info)
	if m == nil {
		return -1
	}
	n, _ := strconv.ParseInt(m[1], 10, 64)
	return n
}

func waitLog(t *testing.T, log *logtest.Log, want string) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); !strings.Contains(log.String(), want); {
		if time.Now().After(deadline) {
			t.Fatalf("log lacks %q:\n%s", want, log.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestNoEvictClientIsPassedOver: CLIENT NO-EVICT ON exempts a client from
// maxmemory-clients eviction, as in Redis 7: with all clients' buffers
// over the limit, the largest client that is not exempt is closed, and
// the exempt one, larger, stays.
func TestNoEvictClientIsPassedOver(t *testing.T) {
	s, ctl := startConfigured(t, shoaltest.Options{}, "client-output-buffer-limit", "pubsub 0 0 0", "maxmemory-clients", "4mb")
	exempt := stalledSubscriber(t, s.Addr, "exempt", "a", true) // RESP3: it may send commands while subscribed
	if _, err := exempt.Write([]byte("CLIENT NO-EVICT on\r\n")); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for !strings.Contains(clientField(t, ctl, "exempt", "flags"), "e") {
		if time.Now().After(deadline) {
			t.Fatal("CLIENT LIST never showed the e flag of CLIENT NO-EVICT on")
		}
		time.Sleep(5 * time.Millisecond)
	}
	stalledSubscriber(t, s.Addr, "other", "b", false)
	pub := shoaltest.Dial(t, s.Addr)
	msg := strings.Repeat("m", 100<<10)
	for i := 0; i < 80; i++ { // 8 MB to the exempt one: over the limit by itself
		pub.Do("PUBLISH", "a", msg)
	}
	publishUntilGone(t, ctl, pub, "b", msg, "the client that was not exempt was not evicted")
	if numsub(t, ctl, "a") != 1 {
		t.Fatal("the NO-EVICT client was evicted")
	}
}
