package kv

import "syscall"

// rusageThread is Linux's RUSAGE_THREAD.
const rusageThread = 1

// threadCPU returns the calling OS thread's user+system CPU time in ns.
func threadCPU() int64 {
	var ru syscall.Rusage
	_ = syscall.Getrusage(rusageThread, &ru)
	return ru.Utime.Nano() + ru.Stime.Nano()
}
