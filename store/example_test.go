package store_test

import (
	"fmt"
	"sort"

	"github.com/shoalkv/shoal/store"
)

func Example() {
	s := store.New(store.Options{})
	defer s.Close()

	s.Set(nil, []byte("greeting"), []byte("hello"), store.SetOptions{})
	val, found, _ := s.Get(nil, []byte("greeting"))
	fmt.Println(string(val), found)

	n, _ := s.IncrBy([]byte("visits"), 41)
	n, _ = s.IncrBy([]byte("visits"), 1)
	fmt.Println(n)

	f, _ := s.IncrByFloat(nil, []byte("price"), 10.5)
	f, _ = s.IncrByFloat(f[:0], []byte("price"), 0.1)
	fmt.Println(string(f))

	// A full SCAN: call until the cursor comes back as 0.
	var keys []string
	for cursor := uint64(0); ; {
		var batch [][]byte
		cursor, batch = s.Scan(cursor, []byte("*i*"), 10, "")
		for _, k := range batch {
			keys = append(keys, string(k))
		}
		if cursor == 0 {
			break
		}
	}
	sort.Strings(keys)
	fmt.Println(keys)
	// Output:
	// hello true
	// 42
	// 10.6
	// [greeting price visits]
}
