package store

import (
	"fmt"
	"unsafe"

	"golang.org/x/sys/unix"
)

// sysRemap moves the mapping b (from sysMap) to one of at least n bytes, keeping its
// contents, without copying them.
func sysRemap(b []byte, n int) []byte {
	oldN := (len(b) + osPage - 1) &^ (osPage - 1)
	n = (n + osPage - 1) &^ (osPage - 1)
	p, err := unix.MremapPtr(unsafe.Pointer(unsafe.SliceData(b)), uintptr(oldN), nil, uintptr(n), unix.MREMAP_MAYMOVE)
	if err != nil {
		panic(fmt.Sprintf("store: mremap of %d to %d bytes: %v", oldN, n, err))
	}
	return unsafe.Slice((*byte)(p), n)
}
