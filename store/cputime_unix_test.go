//go:build unix

package store

import "syscall"

// processCPU returns the user+system CPU time of this process in nanoseconds. The
// server-pattern benchmarks report it per op because on a shared machine wall time per op
// mostly measures other people's load.
func processCPU() int64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
