package listpack

import (
	"bytes"
	"testing"
)

// FuzzDecode feeds arbitrary bytes to the checking readers: Validate and
// Each must return an error or a count, never panic, and Decode at any
// offset must stay inside the listpack. When Validate accepts the bytes,
// Next and Prev (which trust them) must walk them without a fault, Next
// reading what Decode reads, and Prev finding Next's offsets backwards.
func FuzzDecode(f *testing.F) {
	f.Add(build())
	f.Add(build([]byte("a"), []byte("7"), []byte("-4096"), []byte("70000"), []byte("2147483648"), []byte("-9223372036854775808")))
	f.Add(build(bytes.Repeat([]byte{'x'}, 64)))
	f.Add(build(bytes.Repeat([]byte{'z'}, 200))) // a 2-byte backlen
	f.Add(Finish(append(AppendHeader(nil), 0xF0, 0xFF, 0xFF, 0xFF, 0xFF), 1))
	f.Add(Finish(append(AppendHeader(nil), 0xF5, 0x01), 1))
	f.Add([]byte{7, 0, 0, 0, 0xFF, 0xFF, End})
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, lp []byte) {
		for p := -1; p <= len(lp); p++ {
			e, size, err := Decode(lp, p)
			if err != nil {
				continue
			}
			if size < 1 || p+size > len(lp)-1 {
				t.Fatalf("Decode at %d of %d bytes: size %d runs past the end byte", p, len(lp), size)
			}
			if !e.IsInt && len(e.Str) >= size {
				t.Fatalf("Decode at %d: a %d-byte string in a %d-byte entry", p, len(e.Str), size)
			}
		}
		var each [][]byte
		n, err := Each(lp, func(e Entry) error {
			each = append(each, e.AppendText(nil))
			return nil
		})
		if err != nil {
			return
		}
		if n != len(each) {
			t.Fatalf("Each returned %d for %d entries", n, len(each))
		}
		var offsets []int
		for p := First; p < len(lp)-1; {
			offsets = append(offsets, p)
			e, q := Next(lp, p)
			d, size, err := Decode(lp, p)
			if err != nil || e.IsInt != d.IsInt || e.Int != d.Int || !bytes.Equal(e.Str, d.Str) || q != p+size+backlenSize(size) {
				t.Fatalf("at %d Next read %+v up to %d, Decode %+v of %d bytes (%v)", p, e, q, d, size, err)
			}
			if i := len(offsets) - 1; i >= n || !bytes.Equal(e.AppendText(nil), each[i]) {
				t.Fatalf("Next's entry %d differs from Each's", i)
			}
			p = q
		}
		if len(offsets) != n {
			t.Fatalf("Next walked %d entries, Each %d", len(offsets), n)
		}
		i := n - 1
		for p := len(lp) - 1; p > First; i-- {
			p = Prev(lp, p)
			if i < 0 || p != offsets[i] {
				t.Fatalf("Prev reached %d, want entry %d's offset", p, i)
			}
		}
	})
}
