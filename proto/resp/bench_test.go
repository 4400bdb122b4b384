package resp

import (
	"math"
	"strings"
	"testing"
)

var benchSink [][]byte

func benchParse(b *testing.B, in []byte) {
	var p Parser
	b.SetBytes(int64(len(in)))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		args, n, err := p.Parse(in)
		if err != nil || n != len(in) {
			b.Fatalf("Parse: %d, %v", n, err)
		}
		benchSink = args
	}
}

// BenchmarkParseGET measures one GET as redis-benchmark sends it.
func BenchmarkParseGET(b *testing.B) {
	benchParse(b, AppendCommand(nil, "GET", "key:000000000042"))
}

// BenchmarkParseSET measures a SET with a 64-byte value.
func BenchmarkParseSET(b *testing.B) {
	benchParse(b, AppendCommand(nil, "SET", "key:000000000042", strings.Repeat("v", 64)))
}

// BenchmarkParseInline measures inline commands, plain and with quoting.
func BenchmarkParseInline(b *testing.B) {
	b.Run("plain", func(b *testing.B) { benchParse(b, []byte("GET key:000000000042\r\n")) })
	b.Run("quoted", func(b *testing.B) { benchParse(b, []byte(`SET "key 42" "a\tb\x41" 'it\'s'`+"\r\n")) })
}

// BenchmarkParsePipeline100 parses a pipelined batch of 100 GET and SET
// commands the way OnTraffic does; MB/s is parser throughput.
func BenchmarkParsePipeline100(b *testing.B) {
	var batch []byte
	for i := 0; i < 50; i++ {
		batch = AppendCommand(batch, "SET", "key:000000000042", strings.Repeat("v", 64))
		batch = AppendCommand(batch, "GET", "key:000000000042")
	}
	var p Parser
	b.SetBytes(int64(len(batch)))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		in, cmds := batch, 0
		for len(in) > 0 {
			args, n, err := p.Parse(in)
			if err != nil {
				b.Fatal(err)
			}
			in = in[n:]
			cmds++
			benchSink = args
		}
		if cmds != 100 {
			b.Fatalf("%d commands", cmds)
		}
	}
}

// BenchmarkWriters measures each writer appending to a reused buffer.
func BenchmarkWriters(b *testing.B) {
	v := []byte(strings.Repeat("v", 64))
	writers := []struct {
		name string
		fn   func([]byte) []byte
	}{
		{"SimpleString", func(b []byte) []byte { return AppendSimpleString(b, "OK") }},
		{"Error", func(b []byte) []byte { return AppendError(b, "ERR syntax error") }},
		{"Int", func(b []byte) []byte { return AppendInt(b, 1234567) }},
		{"Bulk64", func(b []byte) []byte { return AppendBulk(b, v) }},
		{"BulkString", func(b []byte) []byte { return AppendBulkString(b, "hello") }},
		{"BulkInt", func(b []byte) []byte { return AppendBulkInt(b, 1234567) }},
		{"NullBulk", AppendNullBulk},
		{"NullArray", AppendNullArray},
		{"Null", AppendNull},
		{"ArrayHeader", func(b []byte) []byte { return AppendArrayHeader(b, 100) }},
		{"MapHeader", func(b []byte) []byte { return AppendMapHeader(b, 3) }},
		{"SetHeader", func(b []byte) []byte { return AppendSetHeader(b, 3) }},
		{"PushHeader", func(b []byte) []byte { return AppendPushHeader(b, 3) }},
		{"Double", func(b []byte) []byte { return AppendDouble(b, math.Pi) }},
		{"DoubleInf", func(b []byte) []byte { return AppendDouble(b, math.Inf(1)) }},
		{"FloatBulk", func(b []byte) []byte { return AppendFloatBulk(b, math.Pi) }},
		{"Bool", func(b []byte) []byte { return AppendBool(b, true) }},
		{"BigNumber", func(b []byte) []byte { return AppendBigNumber(b, "3492890328409238509324850943850943825024385") }},
		{"Verbatim", func(b []byte) []byte { return AppendVerbatim(b, "txt", v) }},
		{"CommandGET", func(b []byte) []byte { return AppendCommand(b, "GET", "key:000000000042") }},
	}
	for _, w := range writers {
		b.Run(w.name, func(b *testing.B) {
			buf := make([]byte, 0, 256)
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				buf = w.fn(buf[:0])
			}
			b.SetBytes(int64(len(buf)))
		})
	}
}

// BenchmarkReadReply measures the client side: one bulk reply, and skipping
// a 10-element array of bulks.
func BenchmarkReadReply(b *testing.B) {
	bulk := AppendBulk(nil, []byte(strings.Repeat("v", 64)))
	b.Run("Bulk64", func(b *testing.B) {
		b.SetBytes(int64(len(bulk)))
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			r, n, err := ReadReply(bulk)
			if err != nil || n != len(bulk) || len(r.Data) != 64 {
				b.Fatal(err)
			}
		}
	})
	arr := AppendArrayHeader(nil, 10)
	for i := 0; i < 10; i++ {
		arr = AppendBulkString(arr, "value:000000000042")
	}
	b.Run("SkipArray10", func(b *testing.B) {
		b.SetBytes(int64(len(arr)))
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			n, err := SkipReply(arr)
			if err != nil || n != len(arr) {
				b.Fatal(err)
			}
		}
	})
}
