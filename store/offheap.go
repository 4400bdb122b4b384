package store

import (
	"sync"
	"unsafe"
)

// Off-heap memory. A store's bulk — arena pages, the entries slice and the index — is
// mapped with mmap outside the Go heap where the platform has it (offheap_unix.go), so
// the garbage collector neither scans nor paces on it: with GOGC=100 a heap of N live
// bytes grows to about 2N before a collection, which for a keyspace means an RSS twice
// the data. Off-heap memory is given back to the kernel the moment the store frees it.
//
// Lifetime rule: memory from here is freed only under the owning shard's write lock
// (Flush, an emptied shard, an index or entries resize), so a slice of it handed out
// under the shard's lock is valid until that lock is released and no longer. Every
// exported method copies keys and values out (Get and friends append to dst, Keys,
// Scan and RandomKey copy), except MGet's visit, whose val is documented as valid only
// during the call, which runs with the shard locked.

// offHeapMin is the smallest slice put off the heap: smaller ones (the index and entries
// of a near-empty shard) stay on the Go heap, where a tiny store costs nothing to drop.
const offHeapMin = pageSize

// makeSlice returns a zeroed slice of n T (T must hold no pointers). From offHeapMin
// bytes up, unless heap is set or mmap is unavailable, it is mapped off the Go heap and
// its capacity fills the mapping's last OS page; release it with freeSlice(s, heap).
func makeSlice[T any](n int, heap bool) []T {
	var zero T
	size := int(unsafe.Sizeof(zero))
	if heap || !mmapAvailable || n*size < offHeapMin {
		return make([]T, n)
	}
	b := sysMap(n * size)
	return unsafe.Slice((*T)(unsafe.Pointer(unsafe.SliceData(b))), len(b)/size)[:n]
}

// freeSlice releases a slice from makeSlice(…, heap) with the same heap flag.
func freeSlice[T any](s []T, heap bool) {
	var zero T
	size := int(unsafe.Sizeof(zero))
	if heap || !mmapAvailable || cap(s)*size < offHeapMin {
		return // Go heap: the collector reclaims it
	}
	// makeSlice's capacity is the mapping divided by size, so rounding its byte length
	// up to the OS page gives the mapping back exactly.
	sysUnmap(unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(s))), cap(s)*size))
}

// pageChunk is how many arena pages one mmap call maps: 64 pages, 1 MiB, keeps the
// number of mappings (and so the kernel's VMA count) low at millions of keys.
const pageChunk = 64

// pagePool hands out arena pages. Off the heap, pages are carved from mmap'd chunks;
// a freed page's memory goes back to the kernel (madvise MADV_DONTNEED, at once on
// Linux: its RSS goes, its address stays mapped) and the page is kept for the next
// allocation, so the address space a process maps is its peak, while its RSS follows
// its data.
var pagePool struct {
	mu   sync.Mutex
	free []*[pageSize]byte
	// mapped and inUse count pages off the heap, for tests and INFO.
	mapped, inUse int64
}

// newPage returns a pageSize page (heap or off-heap by the flag; not necessarily zeroed).
func newPage(heap bool) []byte {
	if heap || !mmapAvailable {
		return make([]byte, pageSize)
	}
	p := &pagePool
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.free) == 0 {
		chunk := sysMap(pageChunk * pageSize)
		for i := pageChunk - 1; i >= 0; i-- {
			p.free = append(p.free, (*[pageSize]byte)(chunk[i*pageSize:]))
		}
		p.mapped += pageChunk
	}
	pg := p.free[len(p.free)-1]
	p.free = p.free[:len(p.free)-1]
	p.inUse++
	return pg[:]
}

// freePages returns pages from newPage(heap) and gives their memory back to the kernel.
func freePages(pages [][]byte, heap bool) {
	if heap || !mmapAvailable || len(pages) == 0 {
		return
	}
	for _, pg := range pages {
		sysRelease(pg)
	}
	p := &pagePool
	p.mu.Lock()
	for _, pg := range pages {
		p.free = append(p.free, (*[pageSize]byte)(pg))
	}
	p.inUse -= int64(len(pages))
	p.mu.Unlock()
}

// offHeapPages reports the arena pages mapped outside the Go heap and those in use by
// stores, in bytes (both 0 where mmap is unavailable).
func offHeapPages() (mapped, inUse int64) {
	pagePool.mu.Lock()
	defer pagePool.mu.Unlock()
	return pagePool.mapped * pageSize, pagePool.inUse * pageSize
}

// growSlice returns s with room for at least n elements, its contents kept. An off-heap
// slice that stays off-heap is moved with mremap on Linux, which remaps its pages
// instead of copying them, so growing the entries of a large shard costs page-table
// work, not a copy of every entry.
func growSlice[T any](s []T, n int, heap bool) []T {
	var zero T
	size := int(unsafe.Sizeof(zero))
	if heap || !mmapAvailable || cap(s)*size < offHeapMin {
		grown := makeSlice[T](n, heap)[:len(s)]
		copy(grown, s)
		freeSlice(s, heap)
		return grown
	}
	old := unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(s))), cap(s)*size)
	b := sysRemap(old, n*size)
	return unsafe.Slice((*T)(unsafe.Pointer(unsafe.SliceData(b))), len(b)/size)[:len(s)]
}
