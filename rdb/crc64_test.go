package rdb

import "testing"

func TestCRC64IsRedisJones(t *testing.T) {
	// Redis's crc64.c test vectors.
	if got := crcUpdate(0, []byte("123456789")); got != 0xe9c6d914c4b8d9ca {
		t.Fatalf("crc64(123456789) = %#x, want 0xe9c6d914c4b8d9ca", got)
	}
	li := []byte("Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed " +
		"do eiusmod tempor incididunt ut labore et dolore magna " +
		"aliqua. Ut enim ad minim veniam, quis nostrud exercitation " +
		"ullamco laboris nisi ut aliquip ex ea commodo consequat. Duis " +
		"aute irure dolor in reprehenderit in voluptate velit esse " +
		"cillum dolore eu fugiat nulla pariatur. Excepteur sint " +
		"occaecat cupidatat non proident, sunt in culpa qui officia " +
		"deserunt mollit anim id est laborum.\x00") // sizeof counts the NUL
	if got := crcUpdate(0, li); got != 0xc7794709e69683b3 {
		t.Fatalf("crc64(lorem) = %#x, want 0xc7794709e69683b3", got)
	}
	if split := crcUpdate(crcUpdate(0, li[:100]), li[100:]); split != 0xc7794709e69683b3 {
		t.Fatalf("crc64 over two calls = %#x", split)
	}
}
