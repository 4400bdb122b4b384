package kv

import (
	"testing"
	"unsafe"
)

// BenchmarkExecGateBatch is what every batch of every loop pays for EXEC's
// atomicity: one read lock and unlock of the loop's own gate.
func BenchmarkExecGateBatch(b *testing.B) {
	var ls loopState
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		ls.gate.enter()
		ls.gate.leave()
	}
}

// TestLoopStatsKeepsLoopsOffOneCacheLine: each loop's block, which its loop
// writes on every batch (the gate, the lent arguments), fills a 128-byte
// size class of its own.
func TestLoopStatsKeepsLoopsOffOneCacheLine(t *testing.T) {
	if n := unsafe.Sizeof(loopState{}); n <= 112 || n > 128 {
		t.Errorf("loopState is %d bytes; keep it in (112, 128]", n)
	}
}
