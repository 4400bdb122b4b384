package http1

import "testing"

// TestInvalidValueByteMatchesTable compares the word-at-a-time scan with the byte
// table for every byte value at every position of words and tails.
func TestInvalidValueByteMatchesTable(t *testing.T) {
	for length := 1; length <= 19; length++ {
		for pos := 0; pos < length; pos++ {
			for c := 0; c < 256; c++ {
				v := make([]byte, length)
				for i := range v {
					v[i] = 'a'
				}
				v[pos] = byte(c)
				want := -1
				if !valueChars[c] {
					want = pos
				}
				if got := invalidValueByte(v); got != want {
					t.Fatalf("len %d byte 0x%02x at %d: got %d, want %d", length, c, pos, got, want)
				}
			}
		}
	}
	if invalidValueByte([]byte("\x80\xff\t\t\x7e\x20\x21\x7f")) != 7 {
		t.Fatal("0x7f after high bytes and tabs")
	}
}
