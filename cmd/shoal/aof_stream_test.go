package main

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// TestKill9StreamKeepsAcknowledgedEntries: with appendfsync always, four
// connections XADD with generated IDs (and an approximate trim on one
// stream) while the server is killed with SIGKILL; after a restart every
// acknowledged entry of the untrimmed stream is there with its ID, and the
// trimmed one still ends with its last acknowledged entry.
func TestKill9StreamKeepsAcknowledgedEntries(t *testing.T) {
	dir := t.TempDir()
	p := startBinary(t, aofArgs(dir, "always")...)
	ctx := context.Background()
	var mu sync.Mutex
	acked := map[string]string{} // ID -> value, of "log"
	lastCapped := ""
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := redis.NewClient(&redis.Options{Addr: p.addr(), MaxRetries: -1})
			defer c.Close()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				v := fmt.Sprintf("w%d-%d", w, i)
				id, err := c.XAdd(ctx, &redis.XAddArgs{Stream: "log", Values: []any{"v", v}}).Result()
				if err != nil {
					return
				}
				cid, err := c.XAdd(ctx, &redis.XAddArgs{Stream: "capped", MaxLen: 20, Approx: true, Values: []any{"v", v}}).Result()
				mu.Lock()
				acked[id] = v
				if err == nil && streamIDLess(lastCapped, cid) {
					lastCapped = cid
				}
				mu.Unlock()
				if err != nil {
					return
				}
			}
		}()
	}
	time.Sleep(500 * time.Millisecond)
	p.kill(t)
	close(stop)
	wg.Wait()
	if len(acked) == 0 {
		t.Fatal("no XADD was acknowledged before the kill")
	}
	p2 := startBinary(t, aofArgs(dir, "always")...)
	c := client(t, p2.addr())
	msgs, err := c.XRange(ctx, "log", "-", "+").Result()
	if err != nil {
		t.Fatal(err)
	}
	have := map[string]string{}
	for _, m := range msgs {
		have[m.ID] = fmt.Sprint(m.Values["v"])
	}
	for id, v := range acked {
		if have[id] != v {
			t.Fatalf("acknowledged entry %s=%s is %q after the restart (%d entries)", id, v, have[id], len(msgs))
		}
	}
	last, err := c.XRevRangeN(ctx, "capped", "+", "-", 1).Result()
	if err != nil || len(last) != 1 || streamIDLess(last[0].ID, lastCapped) {
		t.Fatalf("capped ends with %v (%v), last acknowledged %s", last, err, lastCapped)
	}
	if n := c.XLen(ctx, "capped").Val(); n < 20 || n > 200 {
		t.Errorf("capped holds %d entries after MAXLEN ~ 20", n)
	}
	t.Logf("%d acknowledged entries", len(acked))
}

// streamIDLess compares two stream IDs by their numbers ("" is least).
func streamIDLess(a, b string) bool {
	var ams, aseq, bms, bseq uint64
	if a == "" {
		return b != ""
	}
	fmt.Sscanf(a, "%d-%d", &ams, &aseq)
	fmt.Sscanf(b, "%d-%d", &bms, &bseq)
	return ams < bms || ams == bms && aseq < bseq
}
