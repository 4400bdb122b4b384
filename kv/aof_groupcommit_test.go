package kv_test

import (
	"bytes"
	"fmt"
	"os"
	"sync"
	"testing"

	"github.com/shoalkv/shoal/aof"
)

// TestAOFWritesAnsweredOnlyOnceDurable: under appendfsync always, 20
// connections (on two loops) each send SETs of values of their own, one at
// a time, as redis-benchmark at depth 1 does. When a +OK arrives, the
// SET's record is already in the file below the offset the writer reports
// synced (aof.Writer.Durable, which moves only after an fdatasync returns):
// no reply precedes its record's durability, on the loops' group commit
// (the loops led the syncs: LedRounds) as on the writer goroutine's path.
func TestAOFWritesAnsweredOnlyOnceDurable(t *testing.T) {
	s := startAOF(t, aof.FsyncAlways)
	const conns, each = 20, 30
	var wg sync.WaitGroup
	errs := make(chan error, conns)
	for g := 0; g < conns; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := dialRaw(t, s.addr)
			for i := 0; i < each; i++ {
				val := fmt.Sprintf("value-%02d-%03d", g, i)
				if r := c.Do("SET", fmt.Sprintf("k%d", g), val); r != "+OK\r\n" {
					errs <- fmt.Errorf("SET: %q", r)
					return
				}
				durable := s.w.Durable() // the file started empty: offsets are file offsets
				b, err := os.ReadFile(s.path)
				if err != nil {
					errs <- err
					return
				}
				rec := []byte("$" + fmt.Sprint(len(val)) + "\r\n" + val + "\r\n")
				at := bytes.Index(b, rec)
				if at < 0 || int64(at+len(rec)) > durable {
					errs <- fmt.Errorf("+OK for %s (record ending at file offset %d) while only %d bytes were synced", val, at+len(rec), durable)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if s.w.LedRounds() == 0 {
		t.Error("no sync was led by a loop: the replies all took the writer goroutine's path")
	}
	t.Logf("%d SETs; %d syncs led by the loops", conns*each, s.w.LedRounds())
}
