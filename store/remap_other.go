//go:build !linux

package store

// sysRemap moves b (from sysMap) to a new mapping of at least n bytes, copying it.
func sysRemap(b []byte, n int) []byte {
	grown := sysMap(n)
	copy(grown, b)
	sysUnmap(b)
	return grown
}
