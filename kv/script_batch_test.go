package kv_test

import (
	"bufio"
	"fmt"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shoalkv/shoal/eventloop"
	"github.com/shoalkv/shoal/internal/shoaltest"
	"github.com/shoalkv/shoal/kv"
)

// TestPipelinedScriptsKeepTheWorldForTheirBatch: a batch whose first
// script stopped the world keeps it stopped until the batch ends, so the
// EXEC, FCALL and scripts pipelined after that script must neither wait for
// the world again (a deadlock) nor let another loop's read see half of a
// script's or a transaction's writes; every loop is served again after the
// batch.
func TestPipelinedScriptsKeepTheWorldForTheirBatch(t *testing.T) {
	srv := startShoal(t, kv.Options{}, eventloop.Options{Loops: 4})
	lib := "#!lua name=batchlib\nredis.register_function('incrboth', function(keys) redis.call('INCR', keys[1]) return redis.call('INCR', keys[2]) end)"
	if got := dialRaw(t, srv.addr).Do("FUNCTION", "LOAD", lib); got != "$8\r\nbatchlib\r\n" {
		t.Fatalf("FUNCTION LOAD: %q", got)
	}
	const writers, readers, rounds, scripts = 6, 3, 40, 10
	incrBoth := []string{"EVAL", "redis.call('INCR', KEYS[1]) return redis.call('INCR', KEYS[2])", "2", "a", "b"}
	var batch []byte
	for range scripts {
		batch = append(batch, shoaltest.EncodeCommand(incrBoth)...)
	}
	for _, cmd := range [][]string{{"MULTI"}, {"INCR", "a"}, {"INCR", "b"}, {"EXEC"}, {"FCALL", "incrboth", "2", "a", "b"}, {"GET", "a"}} {
		batch = append(batch, shoaltest.EncodeCommand(cmd)...)
	}
	for range scripts {
		batch = append(batch, shoaltest.EncodeCommand(incrBoth)...)
	}
	const replies = 2*scripts + 6

	errs := make(chan error, writers+readers)
	var wg, rwg sync.WaitGroup
	done := make(chan struct{})
	for range writers {
		c := dialConn(t, srv.addr)
		wg.Add(1)
		go func() {
			defer wg.Done()
			rd := bufio.NewReader(c)
			for range rounds {
				if _, err := c.Write(batch); err != nil {
					errs <- err
					return
				}
				for i := range replies {
					var sb strings.Builder
					if err := shoaltest.ReadReply(rd, &sb); err != nil {
						errs <- fmt.Errorf("reply %d of a batch: %w", i, err)
						return
					}
					if strings.HasPrefix(sb.String(), "-") {
						errs <- fmt.Errorf("reply %d of a batch: %q", i, sb.String())
						return
					}
				}
			}
		}()
	}
	for range readers {
		c := dialConn(t, srv.addr)
		rwg.Add(1)
		go func() {
			defer rwg.Done()
			rd := bufio.NewReader(c)
			mget := shoaltest.EncodeCommand([]string{"MGET", "a", "b"})
			for {
				select {
				case <-done:
					return
				default:
				}
				if _, err := c.Write(mget); err != nil {
					errs <- err
					return
				}
				var sb strings.Builder
				if err := shoaltest.ReadReply(rd, &sb); err != nil {
					errs <- err
					return
				}
				if parts := strings.Split(sb.String(), "\r\n"); len(parts) >= 5 && parts[2] != parts[4] {
					errs <- fmt.Errorf("MGET a b saw half of an atomic write: %q", sb.String())
					return
				}
			}
		}()
	}
	finished := make(chan struct{})
	go func() { wg.Wait(); close(finished) }()
	select {
	case <-finished:
	case err := <-errs:
		t.Fatal(err)
	case <-time.After(2 * time.Minute):
		t.Fatal("the pipelined batches did not finish in 2 minutes: a loop waits for a world it holds")
	}
	close(done)
	rwg.Wait()
	select {
	case err := <-errs:
		t.Fatal(err)
	default:
	}
	want := fmt.Sprintf(":%d\r\n", writers*rounds*(2*scripts+2))
	c := dialRaw(t, srv.addr)
	for _, key := range []string{"a", "b"} {
		if got := c.Do("INCRBY", key, "0"); got != want {
			t.Fatalf("%s = %q, want %q", key, got, want)
		}
	}
}

// dialConn is a plain connection to addr for a goroutine of the test,
// closed with it.
func dialConn(t *testing.T, addr string) net.Conn {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}
