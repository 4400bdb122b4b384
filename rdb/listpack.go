package rdb

import (
	"strconv"

	"github.com/shoalkv/shoal/internal/listpack"
)

// Listpacks, Redis 7's packed encoding of small hashes, sorted sets, list
// nodes and stream nodes, are package listpack's; this is how the decoder
// reads them.

// Names rdb/stream.go checks a stream node's header with.
const lpHeaderSize = listpack.HeaderSize

var errLPHeader = listpack.ErrHeader

// lpEach calls fn with every element of listpack lp, checking the
// structure as it goes. A string element is a slice of lp; an integer one
// is formatted into a scratch buffer fn must not keep (scratch is true).
// It returns the number of elements.
func lpEach(lp, scratch []byte, fn func(elem []byte, scratch bool) error) (int, error) {
	return listpack.Each(lp, func(e listpack.Entry) error {
		if e.IsInt {
			return fn(strconv.AppendInt(scratch[:0], e.Int, 10), true)
		}
		return fn(e.Str, false)
	})
}
