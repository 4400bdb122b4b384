package store

// putFree stores v at an index of items that free lists as unused, taking it off
// free, or at a new index past the end, and returns the index. The element
// tables and node and page tables of bdict and ztree reuse their freed indexes
// this way, so ids stay dense and no Go pointer is needed per element.
func putFree[E any](items *[]E, free *[]uint32, v E) uint32 {
	if k := len(*free); k > 0 {
		i := (*free)[k-1]
		*free = (*free)[:k-1]
		(*items)[i] = v
		return i
	}
	*items = append(*items, v)
	return uint32(len(*items) - 1)
}
