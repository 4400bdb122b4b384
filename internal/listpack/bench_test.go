package listpack

import (
	"strconv"
	"testing"
)

// benchElems are stream-like elements: small integers, IDs' deltas and
// short strings.
func benchElems() [][]byte {
	var elems [][]byte
	for i := 0; i < 1000; i++ {
		elems = append(elems, []byte(strconv.Itoa(i*37-5000)), []byte("temperature"))
	}
	return elems
}

func BenchmarkAppendString(b *testing.B) {
	elems := benchElems()
	lp := make([]byte, 0, 64<<10)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		lp = AppendHeader(lp[:0])
		for _, e := range elems {
			lp = AppendString(lp, e)
		}
		lp = Finish(lp, len(elems))
	}
	b.SetBytes(int64(len(lp)))
}

func BenchmarkNext(b *testing.B) {
	lp := build(benchElems()...)
	b.ReportAllocs()
	b.ResetTimer()
	b.SetBytes(int64(len(lp)))
	for i := 0; i < b.N; i++ {
		var sum int64
		for p := First; p < len(lp)-1; {
			var e Entry
			e, p = Next(lp, p)
			sum += e.Int + int64(len(e.Str))
		}
		if sum == 0 {
			b.Fatal("read nothing")
		}
	}
}

func BenchmarkPrev(b *testing.B) {
	lp := build(benchElems()...)
	b.ReportAllocs()
	b.ResetTimer()
	b.SetBytes(int64(len(lp)))
	for i := 0; i < b.N; i++ {
		n := 0
		for p := len(lp) - 1; p > First; n++ {
			p = Prev(lp, p)
		}
		if n != 2000 {
			b.Fatalf("walked %d entries back, want 2000", n)
		}
	}
}

func BenchmarkValidate(b *testing.B) {
	lp := build(benchElems()...)
	b.ReportAllocs()
	b.ResetTimer()
	b.SetBytes(int64(len(lp)))
	for i := 0; i < b.N; i++ {
		if _, err := Validate(lp); err != nil {
			b.Fatal(err)
		}
	}
}
