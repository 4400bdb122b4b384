package store

// The arena keeps every key and string value of a shard in a few large byte pages, so the
// garbage collector sees one pointer per 16 KiB page instead of two per key. A key and its
// value share one block (key bytes, then value bytes). Blocks come in size classes; a freed
// block goes on its class's free list, threaded through its first four bytes, and is reused
// by the next allocation of that class. Blocks above maxSmall live in their own []byte
// (pointer-free contents, so still not scanned) in the large table.
//
// Pages come from the off-heap page pool (offheap.go), as do large blocks of a page or
// more; smaller large blocks stay on the Go heap. reset gives them all back.

const (
	// Pages are 16 KiB: a shard wastes on average half a page, and with 256 shards bigger
	// pages cost several bytes per key at a million keys.
	pageShift = 14
	pageSize  = 1 << pageShift
	// maxSmall bounds small blocks so that the unusable tail of a page stays under 1/16.
	maxSmall = 1024
	// refShift: small refs count 8-byte units, so a uint32 ref addresses 32 GiB per shard.
	refShift = 3
	maxPages = 1 << (32 + refShift - pageShift)
)

// classSizes are the small block sizes: 8-byte steps to 64, then four steps per doubling,
// so a block wastes at most 7 bytes below 64 and at most 25% above.
var classSizes = [...]int{
	8, 16, 24, 32, 40, 48, 56, 64,
	80, 96, 112, 128, 160, 192, 224, 256,
	320, 384, 448, 512, 640, 768, 896, 1024,
}

const numClasses = len(classSizes)

// classOf maps (n+7)/8 to the smallest class holding n bytes.
var classOf [maxSmall/8 + 1]uint8

func init() {
	c := 0
	for i := range classOf {
		for classSizes[c] < i*8 {
			c++
		}
		classOf[i] = uint8(c)
	}
}

// blockSize is the heap a new block for n bytes takes.
func blockSize(n int) int64 {
	if n > maxSmall {
		return int64(n)
	}
	return int64(classSizes[classOf[(n+7)>>3]])
}

// fits reports whether the block at ref, allocated for n bytes, can hold m bytes in place.
// Small blocks must keep their class (the class is derived from the length, not stored);
// large blocks may use their spare capacity.
func (a *arena) fits(ref uint32, n, m int) bool {
	if n > maxSmall || m > maxSmall {
		return n > maxSmall && m > maxSmall && m <= cap(a.large[ref])
	}
	return classOf[(n+7)>>3] == classOf[(m+7)>>3]
}

// blockBytes is the heap a block holding n bytes at ref occupies.
func (a *arena) blockBytes(ref uint32, n int) int {
	if n > maxSmall {
		return cap(a.large[ref])
	}
	return classSizes[classOf[(n+7)>>3]]
}

type arena struct {
	heap  bool // keep pages and large blocks on the Go heap (tests; see shard.heap)
	pages [][]byte
	top   int                // bump offset in the last page
	free  [numClasses]uint32 // head ref+1 of each class's free list, 0 = empty

	large     [][]byte
	freeLarge []uint32 // reusable indices into large
}

// alloc returns a ref to a block of at least n bytes, or ok=false when the shard's
// address space (32 GiB of small blocks) is exhausted. A large block gets capacity room
// (>= n) so that APPEND and SETRANGE growth is amortized.
func (a *arena) alloc(n, room int) (ref uint32, ok bool) {
	if n > maxSmall {
		b := makeSlice[byte](max(n, room), a.heap)[:n]
		if k := len(a.freeLarge); k > 0 {
			ref = a.freeLarge[k-1]
			a.freeLarge = a.freeLarge[:k-1]
			a.large[ref] = b
			return ref, true
		}
		a.large = append(a.large, b)
		return uint32(len(a.large) - 1), true
	}
	c := classOf[(n+7)>>3]
	if head := a.free[c]; head != 0 {
		ref = head - 1
		a.free[c] = le32(a.small(ref, 4))
		return ref, true
	}
	size := classSizes[c]
	if len(a.pages) == 0 || a.top+size > pageSize {
		if len(a.pages) >= maxPages {
			return 0, false
		}
		if len(a.pages) > 0 {
			a.spillTail()
		}
		a.pages = append(a.pages, newPage(a.heap))
		a.top = 0
	}
	ref = uint32(((len(a.pages)-1)<<pageShift | a.top) >> refShift)
	a.top += size
	return ref, true
}

// spillTail hands the unused end of the last page to the free lists, largest class first.
func (a *arena) spillTail() {
	for rem := pageSize - a.top; rem >= classSizes[0]; rem = pageSize - a.top {
		c := numClasses - 1
		for classSizes[c] > rem {
			c--
		}
		ref := uint32(((len(a.pages)-1)<<pageShift | a.top) >> refShift)
		a.pushFree(c, ref)
		a.top += classSizes[c]
	}
}

func (a *arena) pushFree(c int, ref uint32) {
	put32(a.small(ref, 4), a.free[c])
	a.free[c] = ref + 1
}

// release returns the block of ref that was allocated for n bytes.
func (a *arena) release(ref uint32, n int) {
	if n > maxSmall {
		freeSlice(a.large[ref], a.heap)
		a.large[ref] = nil
		a.freeLarge = append(a.freeLarge, ref)
		return
	}
	a.pushFree(int(classOf[(n+7)>>3]), ref)
}

// small returns n bytes of the small block at ref.
func (a *arena) small(ref uint32, n int) []byte {
	addr := int(ref) << refShift
	off := addr & (pageSize - 1)
	return a.pages[addr>>pageShift][off : off+n : off+n]
}

// block returns the first n bytes of the block at ref allocated for n bytes.
func (a *arena) block(ref uint32, n int) []byte {
	if n > maxSmall {
		return a.large[ref][:n]
	}
	return a.small(ref, n)
}

// reset frees every page and large block; used by Flush and when a shard empties.
func (a *arena) reset() {
	freePages(a.pages, a.heap)
	for _, b := range a.large {
		if b != nil {
			freeSlice(b, a.heap)
		}
	}
	*a = arena{heap: a.heap}
}

func le32(b []byte) uint32 {
	return uint32(b[0]) | uint32(b[1])<<8 | uint32(b[2])<<16 | uint32(b[3])<<24
}

func put32(b []byte, v uint32) {
	b[0], b[1], b[2], b[3] = byte(v), byte(v>>8), byte(v>>16), byte(v>>24)
}
