//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package store

import (
	"fmt"
	"os"
	"unsafe"

	"golang.org/x/sys/unix"
)

const mmapAvailable = true

var osPage = os.Getpagesize()

// sysMap maps at least n zeroed bytes of anonymous private memory, rounded up to the OS
// page. Running out of address space is fatal, as it is for the Go heap.
func sysMap(n int) []byte {
	n = (n + osPage - 1) &^ (osPage - 1)
	p, err := unix.MmapPtr(-1, 0, nil, uintptr(n), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_ANON|unix.MAP_PRIVATE)
	if err != nil {
		panic(fmt.Sprintf("store: mmap of %d bytes: %v", n, err))
	}
	return unsafe.Slice((*byte)(p), n)
}

// sysUnmap unmaps b (from sysMap, its length rounded up to the OS page).
func sysUnmap(b []byte) {
	n := (len(b) + osPage - 1) &^ (osPage - 1)
	if err := unix.MunmapPtr(unsafe.Pointer(unsafe.SliceData(b)), uintptr(n)); err != nil {
		panic(fmt.Sprintf("store: munmap of %d bytes: %v", n, err))
	}
}

// sysRelease gives b's physical memory back to the kernel, keeping the mapping.
func sysRelease(b []byte) {
	_ = unix.Madvise(b, unix.MADV_DONTNEED) // advisory: failure only keeps the RSS
}
