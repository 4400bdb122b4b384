package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/shoalkv/shoal/proto/resp"
)

// Blocked clients through a primary's first full sync: clients parked on
// BLPOP and BLMOVE before any replica connected (when nothing was logged
// yet) are served by pushes while the snapshot is being encoded. Each
// serve must be in the snapshot or in the stream after it, never both
// (BLMOVE's destination pushed twice) nor out of order with the other
// writes to the key (an LPOP logged after a later LPUSH pops another
// element on the replica). redis-server and Shoal replicas must end with
// the primary's DEBUG DIGEST.

// skipReply reads one RESP2 reply.
func skipReply(r *bufio.Reader) error {
	line, err := r.ReadString('\n')
	if err != nil {
		return err
	}
	if len(line) < 3 {
		return fmt.Errorf("short reply line %q", line)
	}
	switch line[0] {
	case '+', ':':
		return nil
	case '-':
		return errors.New(strings.TrimSpace(line))
	case '$':
		n, _ := strconv.Atoi(strings.TrimSpace(line[1:]))
		if n < 0 {
			return nil
		}
		_, err = r.Discard(n + 2)
		return err
	case '*':
		n, _ := strconv.Atoi(strings.TrimSpace(line[1:]))
		for i := 0; i < n; i++ {
			if err := skipReply(r); err != nil {
				return err
			}
		}
		return nil
	}
	return fmt.Errorf("unexpected reply line %q", line)
}

// blockedClients runs one connection per command, each sending it again
// as soon as it is answered, until stop; served counts the answers.
type blockedClients struct {
	conns  []net.Conn
	wg     sync.WaitGroup
	mu     sync.Mutex
	served int
	err    error
}

func startBlockedClients(t *testing.T, addr string, cmds [][]string) *blockedClients {
	t.Helper()
	b := &blockedClients{}
	for _, args := range cmds {
		nc, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		b.conns = append(b.conns, nc)
		req := resp.AppendCommand(nil, args...)
		b.wg.Add(1)
		go func() {
			defer b.wg.Done()
			rd := bufio.NewReader(nc)
			for {
				if _, err := nc.Write(req); err != nil {
					return
				}
				if err := skipReply(rd); err != nil {
					b.mu.Lock()
					if b.err == nil && !errors.Is(err, net.ErrClosed) && !strings.Contains(err.Error(), "EOF") {
						b.err = err
					}
					b.mu.Unlock()
					return
				}
				b.mu.Lock()
				b.served++
				b.mu.Unlock()
			}
		}()
	}
	return b
}

func (b *blockedClients) stop(t *testing.T) {
	t.Helper()
	for _, c := range b.conns {
		_ = c.Close()
	}
	b.wg.Wait()
	if b.err != nil {
		t.Fatalf("a blocked client got: %v", b.err)
	}
}

// patientClient is a go-redis client that waits a minute for a reply: a
// replica loading 300,000 keys on a loaded machine may take more than the
// default 3 s to answer INFO (failed once so).
func patientClient(t *testing.T, addr string) *redis.Client {
	c := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1, ReadTimeout: time.Minute})
	t.Cleanup(func() { c.Close() })
	return c
}

// fillKeys writes n string keys of 100 bytes, pipelined.
func fillKeys(t *testing.T, addr string, n int) {
	t.Helper()
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	rd := bufio.NewReader(nc)
	val := strings.Repeat("v", 100)
	for i := 0; i < n; i += 1000 {
		var req []byte
		for j := i; j < i+1000 && j < n; j++ {
			req = resp.AppendCommand(req, "SET", "fill:"+strconv.Itoa(j), val)
		}
		if _, err := nc.Write(req); err != nil {
			t.Fatal(err)
		}
		for j := i; j < i+1000 && j < n; j++ {
			if err := skipReply(rd); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// TestBlockedClientsThroughAFirstFullSync: see the top of the file.
func TestBlockedClientsThroughAFirstFullSync(t *testing.T) {
	ctx := context.Background()
	const waiters = 128
	p := startBinary(t, "--dir", t.TempDir(), "--enable-debug-command", "yes", "--repl-diskless-sync-delay", "0")
	pc := patientClient(t, p.addr())
	fillKeys(t, p.addr(), 300000) // a snapshot that takes a while to encode
	var cmds [][]string
	for i := 0; i < waiters; i++ {
		s := strconv.Itoa(i)
		cmds = append(cmds, []string{"BLPOP", "q:" + s, "0"}, []string{"BLMOVE", "src:" + s, "dst:" + s, "LEFT", "RIGHT", "0"})
	}
	blocked := startBlockedClients(t, p.addr(), cmds)
	waitUntil(t, "every client blocked", func() bool { return infoFields(t, pc, "clients")["blocked_clients"] == strconv.Itoa(len(cmds)) })

	r := startRedisReplica(t, p.port, "--repl-diskless-load", "disabled")
	s := startBinary(t, "--dir", t.TempDir(), "--enable-debug-command", "yes", "--replicaof", "127.0.0.1 "+strconv.Itoa(p.port))
	// Push as soon as a snapshot is under way, from two connections at
	// once on the same keys, in rounds until both replicas are online.
	waitUntil(t, "a replica syncing", func() bool { return atoi(replInfo(t, pc)["connected_slaves"]) > 0 })
	var wg sync.WaitGroup
	done := make(chan struct{})
	for w := 0; w < 2; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			nc, err := net.Dial("tcp", p.addr())
			if err != nil {
				t.Error(err)
				return
			}
			defer nc.Close()
			rd := bufio.NewReader(nc)
			for round := 0; ; round++ {
				select {
				case <-done:
					return
				default:
				}
				var req []byte
				for i := 0; i < waiters; i++ {
					e := fmt.Sprintf("%d:%d:%d", w, round, i)
					req = resp.AppendCommand(req, "LPUSH", "q:"+strconv.Itoa(i), e, e+"b")
					req = resp.AppendCommand(req, "LPUSH", "src:"+strconv.Itoa(i), e)
				}
				if _, err := nc.Write(req); err != nil {
					t.Error(err)
					return
				}
				for i := 0; i < 2*waiters; i++ {
					if err := skipReply(rd); err != nil {
						t.Error(err)
						return
					}
				}
			}
		}()
	}
	waitReplicaOnline(t, pc, 2)
	close(done)
	wg.Wait()
	blocked.stop(t)
	if blocked.served < len(cmds) {
		t.Fatalf("only %d blocked commands served", blocked.served)
	}
	if err := pc.Set(ctx, "last", "1", 0).Err(); err != nil {
		t.Fatal(err)
	}
	rc, sc := patientClient(t, r.addr), patientClient(t, s.addr())
	waitCaughtUp(t, pc, rc, p)
	waitCaughtUp(t, pc, sc, s)
	want := datasetDigest(t, p.addr(), "")
	for who, addr := range map[string]string{"redis-server": r.addr, "shoal": s.addr()} {
		got := datasetDigest(t, addr, "")
		if got == want {
			continue
		}
		t.Errorf("the %s replica's DEBUG DIGEST %s differs from the primary's %s", who, got, want)
		replica, shown := patientClient(t, addr), 0
		for i := 0; i < waiters && shown < 3; i++ {
			for _, k := range []string{"q:", "dst:", "src:"} {
				key := k + strconv.Itoa(i)
				pl, _ := pc.LRange(ctx, key, 0, 3).Result()
				rl, _ := replica.LRange(ctx, key, 0, 3).Result()
				pn, rn := pc.LLen(ctx, key).Val(), replica.LLen(ctx, key).Val()
				if pn != rn || strings.Join(pl, ",") != strings.Join(rl, ",") {
					t.Errorf("%s: primary %d elements %v..., %s replica %d %v...", key, pn, pl, who, rn, rl)
					shown++
				}
			}
		}
	}
}
