package rdb_test

import (
	"bytes"
	"fmt"
	"io"

	"github.com/shoalkv/shoal/rdb"
)

func Example() {
	var file bytes.Buffer
	w := rdb.NewWriter(&file, rdb.Options{})
	w.WriteAux("redis-ver", "7.0.15")
	w.SelectDB(0, 2, 1)
	w.WriteKey([]byte("greeting"), &rdb.Value{Kind: rdb.KindString, Str: []byte("hello")}, rdb.KeyMeta{ExpireAt: 4102444800000})
	w.WriteKey([]byte("user:1"), &rdb.Value{Kind: rdb.KindHash, Items: [][]byte{[]byte("name"), []byte("Ada")}}, rdb.KeyMeta{})
	if err := w.Close(); err != nil {
		panic(err)
	}

	r, err := rdb.NewReader(&file)
	if err != nil {
		panic(err)
	}
	for {
		rec, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			panic(err)
		}
		if rec.Kind == rdb.RecordKey {
			fmt.Printf("db %d %s: %s %q expires at %d\n", rec.DB, rec.Key, rec.Value.Kind, rec.Value.Items, rec.Meta.ExpireAt)
		}
	}
	// Output:
	// db 0 greeting: string [] expires at 4102444800000
	// db 0 user:1: hash ["name" "Ada"] expires at 0
}
