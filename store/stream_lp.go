package store

import "github.com/shoalkv/shoal/internal/listpack"

// A stream node is kept exactly as Redis 7.0 keeps it: one listpack
// (package listpack has the format). Keeping Redis's layout makes a node's
// size, and so where a stream starts a new node and what MAXLEN ~ trims,
// the same as Redis's, and DUMP, RESTORE and RDB files copy nodes as they
// are.
//
// The node code (stream*.go) spells the codec with the short names below;
// each is the listpack function of the same meaning, nothing more.

type lpElem = listpack.Entry

const (
	lpHdr     = listpack.HeaderSize
	lpEndByte = listpack.End
	lpUnknown = listpack.CountUnknown
)

func lpNext(lp []byte, p int) (lpElem, int)  { return listpack.Next(lp, p) }
func lpPrev(lp []byte, p int) int            { return listpack.Prev(lp, p) }
func lpCheck(lp []byte) (int, error)         { return listpack.Validate(lp) }
func lpAppendInt(dst []byte, v int64) []byte { return listpack.AppendInt(dst, v) }
func lpAppendStr(dst, s []byte) []byte       { return listpack.AppendString(dst, s) }
func lpSetHeader(lp []byte, count int)       { listpack.SetHeader(lp, count) }
func lpCount(lp []byte) int                  { return listpack.Count(lp) }
