//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package store

// Without mmap every slice and page comes from the Go heap (pointer-free, so still not
// scanned, but counted by the GC's pacing).
const mmapAvailable = false

func sysMap(n int) []byte { return make([]byte, n) }
func sysUnmap([]byte)     {}
func sysRelease([]byte)   {}
