package frame

import "testing"

var (
	benchKey   = []byte("key:000000000042")
	benchValue = []byte("xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx")
)

func BenchmarkAppendSet(b *testing.B) {
	buf := make([]byte, 0, 256)
	b.ReportAllocs()
	b.SetBytes(int64(RequestHeaderLen + len(benchKey) + len(benchValue)))
	for b.Loop() {
		buf, _ = AppendSet(buf[:0], benchKey, benchValue)
	}
}

func BenchmarkAppendResponse(b *testing.B) {
	buf := make([]byte, 0, 256)
	b.ReportAllocs()
	b.SetBytes(int64(ResponseHeaderLen + len(benchValue)))
	for b.Loop() {
		buf, _ = AppendResponse(buf[:0], StatusOK, benchValue)
	}
}

// BenchmarkDecodeRequestPipeline decodes a batch of 100 mixed GET/SET frames per op.
func BenchmarkDecodeRequestPipeline(b *testing.B) {
	var batch []byte
	for i := 0; i < 50; i++ {
		batch, _ = AppendGet(batch, benchKey)
		batch, _ = AppendSet(batch, benchKey, benchValue)
	}
	var d Decoder
	var req Request
	b.ReportAllocs()
	b.SetBytes(int64(len(batch)))
	for b.Loop() {
		for in := batch; len(in) > 0; {
			n, err := d.DecodeRequest(in, &req)
			if err != nil {
				b.Fatal(err)
			}
			in = in[n:]
		}
	}
}

func BenchmarkDecodeResponse(b *testing.B) {
	buf, _ := AppendResponse(nil, StatusOK, benchValue)
	var d Decoder
	var r Response
	b.ReportAllocs()
	b.SetBytes(int64(len(buf)))
	for b.Loop() {
		if _, err := d.DecodeResponse(buf, &r); err != nil {
			b.Fatal(err)
		}
	}
}
