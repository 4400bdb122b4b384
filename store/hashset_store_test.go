package store

import (
	"errors"
	"fmt"
	"testing"
)

// TestHashSetMemoryIsAccounted: the store's used memory follows a hash's and a
// set's growth and deletion through Update, and a memory limit refuses writes
// that need room under noeviction.
func TestHashSetMemoryIsAccounted(t *testing.T) {
	s := New(Options{})
	defer s.Close()
	base := s.Stats().UsedMemory
	for i := 0; i < 20000; i++ {
		f := []byte(fmt.Sprint("field-", i))
		if err := s.Update([]byte("h"), KindHash, 64, func(o Object) Object {
			h, _ := o.(*Hash)
			if h == nil {
				h = NewHash()
			}
			h.Set(f, []byte("some value of forty bytes, or about that"))
			return h
		}); err != nil {
			t.Fatal(err)
		}
		if err := s.Update([]byte("s"), KindSet, 32, func(o Object) Object {
			st, _ := o.(*Set)
			if st == nil {
				st = NewSet()
			}
			st.Add(f)
			return st
		}); err != nil {
			t.Fatal(err)
		}
	}
	grown := s.Stats().UsedMemory - base
	// 20k fields of ~50 bytes plus 20k members of ~11: at least their bytes.
	if grown < 20000*(50+11) || grown > 20000*400 {
		t.Fatalf("used memory grew by %d bytes for 20k fields and 20k members", grown)
	}
	var size int64
	if err := s.View([]byte("h"), KindHash, func(o Object) { size = o.Size() }); err != nil || size <= 0 {
		t.Fatalf("View: %v, size %d", err, size)
	}

	s.SetMaxMemory(base + grown/2)
	err := s.Update([]byte("h"), KindHash, 64, func(o Object) Object { return o })
	if !errors.Is(err, ErrOOM) {
		t.Fatalf("a write needing room over the limit: %v, want ErrOOM", err)
	}
	if err := s.Update([]byte("h"), KindHash, 0, func(o Object) Object {
		o.(*Hash).Delete([]byte("field-1"))
		return o
	}); err != nil {
		t.Fatalf("a write that only shrinks, over the limit: %v", err)
	}
	s.SetMaxMemory(0)

	if n := s.Del([][]byte{[]byte("h"), []byte("s")}); n != 2 {
		t.Fatalf("Del: %d", n)
	}
	if left := s.Stats().UsedMemory - base; left != 0 {
		t.Fatalf("%d bytes still accounted after deleting both", left)
	}
}

func BenchmarkHashSetGet(b *testing.B) {
	for _, n := range []int{16, 10000} {
		h := NewHash()
		fields := make([][]byte, n)
		for i := range fields {
			fields[i] = []byte(fmt.Sprint("field:", i))
			h.Set(fields[i], []byte("value"))
		}
		b.Run(fmt.Sprintf("%s-%d/Get", h.Encoding(), n), func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				if _, ok := h.Get(fields[i%n]); !ok {
					b.Fatal("missing")
				}
			}
		})
		b.Run(fmt.Sprintf("%s-%d/Set", h.Encoding(), n), func(b *testing.B) {
			b.ReportAllocs()
			v := []byte("other")
			for i := 0; i < b.N; i++ {
				h.Set(fields[i%n], v)
			}
		})
	}
}

func BenchmarkSetAddHas(b *testing.B) {
	for _, tc := range []struct {
		name   string
		member func(i int) []byte
	}{
		{"intset", func(i int) []byte { return []byte(fmt.Sprint(i % 500)) }},
		{"hashtable", func(i int) []byte { return []byte(fmt.Sprint("member:", i%100000)) }},
	} {
		s := NewSet()
		members := make([][]byte, 100000)
		for i := range members {
			members[i] = tc.member(i)
			s.Add(members[i])
		}
		b.Run(tc.name+"/Has", func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				if !s.Has(members[i%len(members)]) {
					b.Fatal("missing")
				}
			}
		})
		b.Run(tc.name+"/AddRemove", func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				m := members[i%len(members)]
				s.Remove(m)
				s.Add(m)
			}
		})
	}
}
