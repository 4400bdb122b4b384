package store

import (
	"strconv"
	"testing"
)

// TestIncrementalResizeKeepsEveryKey grows and shrinks one shard through several index
// sizes with deletes, overwrites and re-inserts interleaved, checking the invariants
// (both indexes while a migration is under way) and every key's value as it goes.
func TestIncrementalResizeKeepsEveryKey(t *testing.T) {
	s := newTestStore(t, Options{Shards: 1})
	sh := &s.shards[0]
	live := map[int]bool{}
	key := func(i int) []byte { return []byte("k" + strconv.Itoa(i)) }
	check := func(stage string) {
		t.Helper()
		checkInvariants(t, s)
		for i := range live {
			if v, ok, _ := s.Get(nil, key(i)); !ok || string(v) != strconv.Itoa(i) {
				t.Fatalf("%s: key %d = %q %v", stage, i, v, ok)
			}
		}
	}
	migrations := 0
	const n = 20000
	for i := 0; i < n; i++ {
		s.Set(nil, key(i), []byte(strconv.Itoa(i)), SetOptions{})
		live[i] = true
		if i%3 == 0 && i > 0 { // delete an older key: removes during migration
			s.Del([][]byte{key(i / 2)})
			delete(live, i/2)
		}
		if sh.next != nil {
			migrations++
			if migrations%50 == 0 {
				check("growing")
			}
		}
	}
	check("grown")
	before := migrations
	for i := 0; i < n; i++ { // shrink: delete all but a few, re-adding some meanwhile
		if live[i] && i%40 != 0 {
			s.Del([][]byte{key(i)})
			delete(live, i)
		}
		if i%97 == 0 {
			s.Set(nil, key(n+i), []byte(strconv.Itoa(n+i)), SetOptions{})
			live[n+i] = true
		}
		if sh.next != nil {
			migrations++
			if migrations%50 == 0 {
				check("shrinking")
			}
		}
	}
	check("shrunk")
	if before < 100 || migrations == before {
		t.Fatalf("writes during migrations: %d growing, %d shrinking; the test did not exercise both", before, migrations-before)
	}
	if len(sh.index) > 8*len(live) && len(sh.index) > minIndex {
		t.Errorf("index of %d slots for %d keys after shrinking", len(sh.index), len(live))
	}
}
