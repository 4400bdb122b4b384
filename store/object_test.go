package store

import (
	"errors"
	"fmt"
	"slices"
	"testing"
)

// testList is a minimal Object for testing the object table: a list of strings
// whose Size is the bytes of its elements plus 16 per element.
type testList struct {
	kind  Kind // KindList when zero
	elems []string
	size  int64
}

func (l *testList) Kind() Kind {
	if l.kind == KindNone {
		return KindList
	}
	return l.kind
}
func (l *testList) Len() int         { return len(l.elems) }
func (l *testList) Size() int64      { return l.size }
func (l *testList) Encoding() string { return "quicklist" }
func (l *testList) Clone() Object {
	return &testList{kind: l.kind, elems: slices.Clone(l.elems), size: l.size}
}
func (l *testList) push(v ...string) {
	for _, e := range v {
		l.elems = append(l.elems, e)
		l.size += int64(len(e)) + 16
	}
}
func (l *testList) pop() string {
	v := l.elems[0]
	l.elems = l.elems[1:]
	l.size -= int64(len(v)) + 16
	return v
}

func push(t *testing.T, s *Store, key string, v ...string) {
	t.Helper()
	err := s.Update(b(key), KindList, 64, func(o Object) Object {
		if o == nil {
			o = &testList{}
		}
		o.(*testList).push(v...)
		return o
	})
	if err != nil {
		t.Fatalf("push %q: %v", key, err)
	}
}

func elems(t *testing.T, s *Store, key string) []string {
	t.Helper()
	var got []string
	if err := s.View(b(key), KindList, func(o Object) {
		if o != nil {
			got = slices.Clone(o.(*testList).elems)
		}
	}); err != nil {
		t.Fatalf("view %q: %v", key, err)
	}
	return got
}

func TestObjectUpdateViewDelete(t *testing.T) {
	s := newTestStore(t, Options{Shards: 4})
	before := s.Stats().UsedMemory
	push(t, s, "l", "a", "bb")
	push(t, s, "l", "ccc")
	if got := elems(t, s, "l"); !slices.Equal(got, []string{"a", "bb", "ccc"}) {
		t.Fatalf("elems = %q", got)
	}
	if typ := s.Type(b("l")); typ != "list" {
		t.Fatalf("TYPE = %q", typ)
	}
	if enc, ok := s.Encoding(b("l")); !ok || enc != "quicklist" {
		t.Fatalf("encoding = %q, %v", enc, ok)
	}
	// The object's Size is accounted on top of its key's entry.
	grew := s.Stats().UsedMemory - before
	if want := int64(1+16+2+16+3+16) + blockSize(1+objRefSize) + entryOverhead; grew != want {
		t.Fatalf("used grew by %d, want %d", grew, want)
	}
	checkInvariants(t, s)

	// Other kinds' commands see WRONGTYPE, and objects of another kind too.
	if _, _, err := s.Get(nil, b("l")); !errors.Is(err, ErrWrongType) {
		t.Fatalf("Get on a list: %v", err)
	}
	if err := s.View(b("l"), KindHash, func(Object) { t.Fatal("fn called for the wrong kind") }); !errors.Is(err, ErrWrongType) {
		t.Fatalf("View(hash) on a list: %v", err)
	}
	if err := s.Update(b("l"), KindSet, 0, func(o Object) Object { t.Fatal("fn called"); return o }); !errors.Is(err, ErrWrongType) {
		t.Fatalf("Update(set) on a list: %v", err)
	}
	s.Set(nil, b("str"), b("v"), SetOptions{})
	if err := s.Update(b("str"), KindList, 0, func(o Object) Object { t.Fatal("fn called"); return o }); !errors.Is(err, ErrWrongType) {
		t.Fatalf("Update on a string: %v", err)
	}

	// Emptying the object deletes the key and gives all its memory back.
	for range 3 {
		if err := s.Update(b("l"), KindList, 0, func(o Object) Object { o.(*testList).pop(); return o }); err != nil {
			t.Fatal(err)
		}
	}
	if n := s.Exists(bs("l")); n != 0 {
		t.Fatalf("emptied list still exists")
	}
	if got := s.Stats().UsedMemory - before; got != blockSize(len("str")+1)+entryOverhead {
		t.Fatalf("used after emptying = %d over the start, want only str's", got)
	}
	// An update that creates nothing leaves no key.
	if err := s.Update(b("none"), KindList, 0, func(o Object) Object { return o }); err != nil || s.Exists(bs("none")) != 0 {
		t.Fatalf("a nil result created a key (err %v)", err)
	}
	checkInvariants(t, s)
}

func TestObjectReplacementKeepsTTL(t *testing.T) {
	now := int64(1_000_000)
	s := newTestStore(t, Options{Shards: 1, Now: func() int64 { return now }})
	push(t, s, "l", "a")
	s.Expire(b("l"), now+5000, ExpireAlways)
	err := s.Update(b("l"), KindList, 0, func(o Object) Object {
		n := o.Clone().(*testList)
		n.push("b")
		return n
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := elems(t, s, "l"); !slices.Equal(got, []string{"a", "b"}) {
		t.Fatalf("elems = %q", got)
	}
	if ttl := s.PTTL(b("l")); ttl != 5000 {
		t.Fatalf("PTTL after replacement = %d", ttl)
	}
	checkInvariants(t, s)
	now += 5001
	if got := elems(t, s, "l"); got != nil {
		t.Fatalf("expired list still read %q", got)
	}
	checkInvariants(t, s) // the reclaim dropped its table slot
}

func TestSetOverwritesObject(t *testing.T) {
	s := newTestStore(t, Options{Shards: 1})
	push(t, s, "k", "x", "y")
	if _, _, _, err := s.Set(nil, b("k"), b("v"), SetOptions{}); err != nil {
		t.Fatal(err)
	}
	if v, ok := mustGet(t, s, "k"); !ok || v != "v" {
		t.Fatalf("GET = %q %v", v, ok)
	}
	checkInvariants(t, s)
	push(t, s, "k2", "z") // reuses the freed table slot
	checkInvariants(t, s)
	if len(s.shards[0].objs) != 1 {
		t.Fatalf("object table has %d slots, want the freed one reused", len(s.shards[0].objs))
	}
}

func TestRenameAndCopyObjects(t *testing.T) {
	now := int64(1_000_000)
	s := newTestStore(t, Options{Shards: 8, Now: func() int64 { return now }})
	for i := range 200 {
		push(t, s, fmt.Sprint("src", i), fmt.Sprint(i), "tail")
		s.Expire(b(fmt.Sprint("src", i)), now+int64(i+1)*1000, ExpireAlways)
	}
	s.Set(nil, b("dst0"), b("a string to replace"), SetOptions{})
	for i := range 200 {
		if err := s.Rename(b(fmt.Sprint("src", i)), b(fmt.Sprint("dst", i))); err != nil {
			t.Fatal(err)
		}
	}
	checkInvariants(t, s)
	for i := range 200 {
		key := fmt.Sprint("dst", i)
		if got := elems(t, s, key); !slices.Equal(got, []string{fmt.Sprint(i), "tail"}) {
			t.Fatalf("%s = %q after rename", key, got)
		}
		if ttl := s.PTTL(b(key)); ttl != int64(i+1)*1000 {
			t.Fatalf("%s TTL %d after rename", key, ttl)
		}
	}
	if s.DBSize() != 200 {
		t.Fatalf("DBSize %d after renames", s.DBSize())
	}

	// COPY clones: changing the copy leaves the source alone.
	if ok, err := s.Copy(b("dst1"), b("cp"), false); !ok || err != nil {
		t.Fatalf("Copy = %v, %v", ok, err)
	}
	push(t, s, "cp", "more")
	if got := elems(t, s, "dst1"); !slices.Equal(got, []string{"1", "tail"}) {
		t.Fatalf("source changed by a change to its copy: %q", got)
	}
	if ttl := s.PTTL(b("cp")); ttl != 2000 {
		t.Fatalf("copy's TTL %d, want the source's", ttl)
	}
	if ok, _ := s.Copy(b("dst2"), b("cp"), false); ok {
		t.Fatal("Copy onto an existing key without REPLACE copied")
	}
	if ok, err := s.Copy(b("dst2"), b("cp"), true); !ok || err != nil {
		t.Fatalf("Copy REPLACE = %v, %v", ok, err)
	}
	if got := elems(t, s, "cp"); !slices.Equal(got, []string{"2", "tail"}) {
		t.Fatalf("copy with REPLACE holds %q", got)
	}
	s.Set(nil, b("s"), b("12345"), SetOptions{})
	if ok, err := s.Copy(b("s"), b("dst3"), true); !ok || err != nil {
		t.Fatalf("Copy of a string over a list = %v, %v", ok, err)
	}
	if v, _ := mustGet(t, s, "dst3"); v != "12345" {
		t.Fatalf("copied string = %q", v)
	}
	if ok, _ := s.Copy(b("missing"), b("x"), true); ok {
		t.Fatal("Copy of a missing key copied")
	}
	checkInvariants(t, s)
}

func TestTxMovesAndStores(t *testing.T) {
	s := newTestStore(t, Options{Shards: 16})
	push(t, s, "a", "1", "2")
	s.Set(nil, b("str"), b("v"), SetOptions{})
	// Move one element from a to b, then a's last to a new key: a empties.
	move := func(from, to string) {
		t.Helper()
		err := s.Tx(bs(from, to), 64, func(tx *Tx) error {
			src, err := tx.Object(0, KindList)
			if err != nil || src == nil {
				return fmt.Errorf("src %v %v", src, err)
			}
			dst, err := tx.Object(1, KindList)
			if err != nil {
				return err
			}
			v := src.(*testList).pop()
			if dst == nil {
				dst = &testList{}
				dst.(*testList).push(v)
				return tx.Put(1, dst)
			}
			dst.(*testList).push(v)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	move("a", "b")
	move("a", "b")
	if s.Exists(bs("a")) != 0 {
		t.Fatal("emptied source still exists")
	}
	if got := elems(t, s, "b"); !slices.Equal(got, []string{"1", "2"}) {
		t.Fatalf("b = %q", got)
	}
	move("b", "b") // rotating one list: the same key twice
	if got := elems(t, s, "b"); !slices.Equal(got, []string{"2", "1"}) {
		t.Fatalf("b after rotation = %q", got)
	}
	checkInvariants(t, s)

	// Put replaces a string (a *STORE destination) and clears its TTL; a source that
	// is also the destination is replaced after its in-place change is accounted.
	s.Expire(b("str"), s.Now()+100000, ExpireAlways)
	err := s.Tx(bs("str", "b"), 64, func(tx *Tx) error {
		if k := tx.Kind(0); k != KindString {
			return fmt.Errorf("Kind(str) = %v", k)
		}
		if _, err := tx.Object(0, KindList); !errors.Is(err, ErrWrongType) {
			return fmt.Errorf("Object(str) err = %v", err)
		}
		src, _ := tx.Object(1, KindList)
		src.(*testList).push("3")
		n := src.Clone()
		if err := tx.Put(0, n); err != nil {
			return err
		}
		return tx.Put(1, &testList{elems: []string{"only"}, size: 20})
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := elems(t, s, "str"); !slices.Equal(got, []string{"2", "1", "3"}) {
		t.Fatalf("stored = %q", got)
	}
	if ttl := s.PTTL(b("str")); ttl != -1 {
		t.Fatalf("stored key kept TTL %d", ttl)
	}
	if got := elems(t, s, "b"); !slices.Equal(got, []string{"only"}) {
		t.Fatalf("b = %q", got)
	}
	// Putting an empty object deletes.
	if err := s.Tx(bs("b"), 0, func(tx *Tx) error { return tx.Put(0, &testList{}) }); err != nil || s.Exists(bs("b")) != 0 {
		t.Fatalf("Put(empty) left the key (err %v)", err)
	}
	checkInvariants(t, s)
}

func TestObjectsEvictExpireFlushSnapshot(t *testing.T) {
	s := newTestStore(t, Options{Shards: 4, MaxMemory: 64 << 10, Policy: AllKeysLRU})
	big := string(make([]byte, 1000))
	for i := range 500 {
		push(t, s, fmt.Sprint("l", i), big)
	}
	if used := s.Stats().UsedMemory; used > 64<<10+2048 {
		t.Fatalf("used %d over the 64 KiB limit: objects are not evicted", used)
	}
	if s.Stats().EvictedKeys == 0 {
		t.Fatal("nothing evicted")
	}
	checkInvariants(t, s)

	s.SetPolicy(NoEviction)
	err := s.Update(b("more"), KindList, 70<<10, func(o Object) Object { return &testList{elems: []string{"x"}} })
	if !errors.Is(err, ErrOOM) {
		t.Fatalf("Update over the limit under noeviction: %v", err)
	}

	// SnapshotShard sees every collection once, with its TTL.
	s.SetMaxMemory(0)
	s.Flush()
	push(t, s, "x", "1")
	push(t, s, "y", "2")
	s.Expire(b("y"), s.Now()+60000, ExpireAlways)
	s.Set(nil, b("z"), b("3"), SetOptions{})
	seen := map[string]int64{}
	for i := range s.ShardCount() {
		s.SnapshotShard(i, func(key, val []byte, at int64) { seen[string(key)] = -1 },
			func(key []byte, o Object, at int64) { seen[string(key)] = at })
	}
	if len(seen) != 3 || seen["x"] != 0 || seen["y"] == 0 || seen["z"] != -1 {
		t.Fatalf("snapshot saw %v", seen)
	}
	s.Flush()
	checkInvariants(t, s)
	for i := range s.shards {
		if len(s.shards[i].objs) != 0 {
			t.Fatalf("shard %d keeps %d object slots after Flush", i, len(s.shards[i].objs))
		}
	}
}

func TestStringEncoding(t *testing.T) {
	s := newTestStore(t, Options{})
	for _, c := range []struct{ val, enc string }{
		{"12345", "int"}, {"-9223372036854775808", "int"}, {"9223372036854775808", "embstr"},
		{"012", "embstr"}, {"abc", "embstr"}, {string(make([]byte, 44)), "embstr"},
		{string(make([]byte, 45)), "raw"},
	} {
		s.Set(nil, b("k"), b(c.val), SetOptions{})
		if enc, ok := s.Encoding(b("k")); !ok || enc != c.enc {
			t.Errorf("encoding of %q = %q, want %q", c.val, enc, c.enc)
		}
	}
	if _, ok := s.Encoding(b("missing")); ok {
		t.Error("encoding of a missing key found")
	}
}

// walkCounter is an Object that counts every call the store makes on it.
type walkCounter struct {
	testList
	calls int
}

func (w *walkCounter) Len() int         { w.calls++; return w.testList.Len() }
func (w *walkCounter) Size() int64      { w.calls++; return w.testList.Size() }
func (w *walkCounter) Encoding() string { w.calls++; return "hashtable" }

// TestDeleteDoesNotWalkTheCollection: deleting, evicting or overwriting a
// collection costs the same few calls whatever its size (no per-element
// work on the loop; the collector frees the elements).
func TestDeleteDoesNotWalkTheCollection(t *testing.T) {
	s := newTestStore(t, Options{Shards: 1})
	for _, n := range []int{1, 100000} {
		w := &walkCounter{}
		for i := range n {
			w.push(fmt.Sprint(i))
		}
		if err := s.Update(b("big"), KindList, 0, func(Object) Object { return w }); err != nil {
			t.Fatal(err)
		}
		w.calls = 0
		if s.Del(bs("big")) != 1 {
			t.Fatal("DEL missed the key")
		}
		if w.calls > 2 {
			t.Fatalf("deleting a %d-element collection made %d calls on it", n, w.calls)
		}
	}
	checkInvariants(t, s)
}
