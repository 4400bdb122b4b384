package frame

import (
	"bytes"
	"testing"
)

func requestSeeds(f *testing.F) {
	var b []byte
	b, _ = AppendGet(b, []byte("key"))
	f.Add(b)
	b, _ = AppendSet(b, []byte("key"), []byte("value"))
	f.Add(b)
	b, _ = AppendDel(b, nil)
	b, _ = AppendPing(b, []byte("p"))
	f.Add(b)
	f.Add(hdr(2, 0xffff, 0xffffffff))
	f.Add(hdr(1, 1, 1))
	f.Add([]byte{4})
}

// FuzzDecodeRequest checks that decoding never panics, never consumes more than it was
// given, returns sub-slices inside the input, and that what it accepts re-encodes to the
// same bytes.
func FuzzDecodeRequest(f *testing.F) {
	requestSeeds(f)
	d := Decoder{Limits: Limits{MaxKeyLen: 1024, MaxValueLen: 4096}}
	f.Fuzz(func(t *testing.T, in []byte) {
		checkDecodes(t, in, d.DecodeRequest, func(r *Request) ([]byte, error) {
			return AppendRequest(nil, r.Op, r.Key, r.Value)
		})
	})
}

// FuzzDecodeResponse is FuzzDecodeRequest for responses.
func FuzzDecodeResponse(f *testing.F) {
	var b []byte
	b, _ = AppendResponse(b, StatusOK, []byte("v"))
	f.Add(b)
	b, _ = AppendResponse(b, StatusNotFound, nil)
	b = AppendErrorResponse(b, "ERR x")
	f.Add(b)
	f.Add([]byte{1, 0, 0, 0, 1, 'x'})
	f.Add([]byte{0, 0xff, 0xff, 0xff, 0xff})
	d := Decoder{Limits: Limits{MaxValueLen: 4096}}
	f.Fuzz(func(t *testing.T, in []byte) {
		checkDecodes(t, in, d.DecodeResponse, func(r *Response) ([]byte, error) {
			return AppendResponse(nil, r.Status, r.Value)
		})
	})
}

// checkDecodes decodes in frame after frame until it ends or a frame fails, and
// checks each: a failure consumes nothing, a success consumes part of what is
// left, and what decodes re-encodes to the bytes it came from.
func checkDecodes[M any](t *testing.T, in []byte, decode func([]byte, *M) (int, error), encode func(*M) ([]byte, error)) {
	t.Helper()
	for len(in) > 0 {
		var m M
		n, err := decode(in, &m)
		if err != nil {
			if n != 0 {
				t.Fatalf("error %v with n=%d", err, n)
			}
			return
		}
		if n <= 0 || n > len(in) {
			t.Fatalf("n=%d for %d bytes", n, len(in))
		}
		again, err := encode(&m)
		if err != nil || !bytes.Equal(again, in[:n]) {
			t.Fatalf("re-encode mismatch: %v", err)
		}
		in = in[n:]
	}
}
