package kv_test

import (
	"fmt"
	"testing"
)

// Benchmarks of the bitmap and HyperLogLog paths, pipelined over loopback
// like BenchmarkGET: allocs/op is the server's per request.

// cmd encodes a command as RESP.
func cmd(args ...string) string {
	s := fmt.Sprintf("*%d\r\n", len(args))
	for _, a := range args {
		s += fmt.Sprintf("$%d\r\n%s\r\n", len(a), a)
	}
	return s
}

func BenchmarkSETBIT(b *testing.B) {
	benchPipeline(b, []string{cmd("SETBIT", "bits", "800000", "1")},
		[]byte(cmd("SETBIT", "bits", "800000", "1")), []byte(":1\r\n"))
}

func BenchmarkGETBIT(b *testing.B) {
	benchPipeline(b, []string{cmd("SETBIT", "bits", "800000", "1")},
		[]byte(cmd("GETBIT", "bits", "800000")), []byte(":1\r\n"))
}

func BenchmarkBITCOUNT1KiB(b *testing.B) {
	benchPipeline(b, []string{cmd("SETBIT", "bits", "8191", "1")},
		[]byte(cmd("BITCOUNT", "bits")), []byte(":1\r\n"))
}

func BenchmarkBITFIELDIncr(b *testing.B) {
	benchPipeline(b, []string{cmd("BITFIELD", "f", "SET", "u8", "#3", "255")},
		[]byte(cmd("BITFIELD", "f", "OVERFLOW", "SAT", "INCRBY", "u8", "#3", "100")), []byte("*1\r\n:255\r\n"))
}

func BenchmarkPFADDDense(b *testing.B) {
	benchPipeline(b, []string{cmd("PFADD", "h", "a", "b", "c"), cmd("PFDEBUG", "TODENSE", "h")},
		[]byte(cmd("PFADD", "h", "a")), []byte(":0\r\n"))
}

func BenchmarkPFADDSparse(b *testing.B) {
	benchPipeline(b, []string{cmd("PFADD", "h", "a", "b", "c")},
		[]byte(cmd("PFADD", "h", "a")), []byte(":0\r\n"))
}

func BenchmarkPFCOUNTCached(b *testing.B) {
	benchPipeline(b, []string{cmd("PFADD", "h", "a", "b", "c")},
		[]byte(cmd("PFCOUNT", "h")), []byte(":3\r\n"))
}
