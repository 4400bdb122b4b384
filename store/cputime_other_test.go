//go:build !unix

package store

// processCPU is not measured off unix; the cpu-ns/op metric then reads 0.
func processCPU() int64 { return 0 }
