package store

import (
	"strconv"
	"testing"
)

// The stream's listpack paths: appending entries (encoding) and reading
// them back both ways (decoding, backlens), and checking loaded nodes.
// Each reports cpu-ns/op beside ns/op: on a shared machine wall time
// mostly measures other people's load.

// reportCPU reports the process's CPU time since cpu0 per op.
func reportCPU(b *testing.B, cpu0 int64) {
	b.ReportMetric(float64(processCPU()-cpu0)/float64(b.N), "cpu-ns/op")
}

// benchStreamFields is an XADD-like entry: the same two fields each time
// (so entries after a node's first are SAMEFIELDS), one integer value and
// one string value.
func benchStreamFields(i int) [][]byte {
	return [][]byte{[]byte("sensor"), []byte(strconv.Itoa(i % 5000)), []byte("reading"), []byte("temperature-ok")}
}

func benchStream(n int) *Stream {
	s := NewStream()
	for i := 0; i < n; i++ {
		s.Add(StreamID{Ms: uint64(1000 + i/3), Seq: uint64(i % 3)}, benchStreamFields(i))
	}
	return s
}

func BenchmarkStreamAdd(b *testing.B) {
	const perStream = 10000
	fields := make([][][]byte, perStream)
	for i := range fields {
		fields[i] = benchStreamFields(i)
	}
	b.ReportAllocs()
	cpu0 := processCPU()
	s := NewStream()
	for i := 0; i < b.N; i++ {
		j := i % perStream
		if j == 0 {
			s = NewStream()
		}
		s.Add(StreamID{Ms: uint64(1000 + j/3), Seq: uint64(j % 3)}, fields[j])
	}
	reportCPU(b, cpu0)
}

func benchmarkStreamRange(b *testing.B, rev bool) {
	const entries = 10000
	s := benchStream(entries)
	end := StreamID{Ms: ^uint64(0), Seq: ^uint64(0)}
	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := processCPU()
	for i := 0; i < b.N; i++ {
		n := 0
		s.Range(StreamID{}, end, rev, func(_ StreamID, fv [][]byte) bool {
			n += len(fv)
			return true
		})
		if n != 4*entries {
			b.Fatalf("read %d fields and values, want %d", n, 4*entries)
		}
	}
	reportCPU(b, cpu0)
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*entries), "ns/entry")
}

func BenchmarkStreamRange(b *testing.B)    { benchmarkStreamRange(b, false) }
func BenchmarkStreamRevRange(b *testing.B) { benchmarkStreamRange(b, true) }

func BenchmarkStreamLoad(b *testing.B) {
	s := benchStream(10000)
	var nodes []StreamNodeData
	s.Nodes(func(master StreamID, lp []byte) {
		nodes = append(nodes, StreamNodeData{Master: master, LP: lp})
	})
	m := s.Meta()
	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := processCPU()
	for i := 0; i < b.N; i++ {
		if _, err := LoadStream(nodes, m); err != nil {
			b.Fatal(err)
		}
	}
	reportCPU(b, cpu0)
}
