package store

import "math/bits"

// The open-addressing table over element ids that a hash or set's dict
// (bdict) and a large sorted set's member index (ztree) both keep: a slot
// holds id+1 (0 is empty), a lookup probes linearly from the element's hash,
// and a deletion shifts the rest of its probe run back, so there are no
// tombstones. The owner keeps each id's hash; idHash reads it.
type idHasher interface{ idHash(id uint32) uint32 }

// slotOfID returns the slot of slots holding id, whose hash is h; id must be in it.
func slotOfID(slots []uint32, id, h uint32) uint32 {
	mask := uint32(len(slots) - 1)
	for i := h & mask; ; i = (i + 1) & mask {
		if slots[i] == id+1 {
			return i
		}
	}
}

// placeID puts id, whose hash is h, in the first empty slot of its probe run.
func placeID(slots []uint32, id, h uint32) {
	mask := uint32(len(slots) - 1)
	i := h & mask
	for slots[i] != 0 {
		i = (i + 1) & mask
	}
	slots[i] = id + 1
}

// unslotAt empties slot i and shifts back the entries of its probe run that
// may move closer to their home slot.
func unslotAt[H idHasher](slots []uint32, i uint32, hs H) {
	mask := uint32(len(slots) - 1)
	slots[i] = 0
	for j := (i + 1) & mask; slots[j] != 0; j = (j + 1) & mask {
		home := hs.idHash(slots[j]-1) & mask
		if (j-home)&mask < (j-i)&mask {
			continue // its home lies cyclically in (i, j]: it stays
		}
		slots[i] = slots[j]
		slots[j] = 0
		i = j
	}
}

// reslotIDs returns a table of n slots (a power of two) holding the ids of old.
func reslotIDs[H idHasher](old []uint32, n int, hs H) []uint32 {
	slots := make([]uint32, n)
	for _, s := range old {
		if s != 0 {
			placeID(slots, s-1, hs.idHash(s-1))
		}
	}
	return slots
}

// unslotID removes id from slots.
func unslotID[H idHasher](slots []uint32, id uint32, hs H) {
	unslotAt(slots, slotOfID(slots, id, hs.idHash(id)), hs)
}

// scanIDs calls fn on the ids whose home slot is cursor's, then on those of the
// following home slots in reverse-binary order (as Redis's dictScan, so an id
// present for the whole iteration is returned at least once however the table
// resizes in between), until count ids or 10*count slots; it returns the next
// cursor, 0 at the end.
func scanIDs[H idHasher](slots []uint32, cursor uint64, count int, hs H, fn func(id uint32)) uint64 {
	mask := uint64(len(slots) - 1)
	found, visited := 0, 0
	for {
		b := cursor & mask
		for j := b; slots[j] != 0; j = (j + 1) & mask {
			id := slots[j] - 1
			if uint64(hs.idHash(id))&mask == b {
				fn(id)
				found++
			}
		}
		visited++
		cursor |= ^mask
		cursor = bits.Reverse64(bits.Reverse64(cursor) + 1)
		if cursor == 0 || found >= count || visited >= count*10 {
			return cursor
		}
	}
}

// findID returns the id in slots whose hash is h and for which is reports true,
// or ^uint32(0) when there is none.
func findID(slots []uint32, h uint32, is func(id uint32) bool) uint32 {
	mask := uint32(len(slots) - 1)
	for i := h & mask; ; i = (i + 1) & mask {
		s := slots[i]
		if s == 0 {
			return ^uint32(0)
		}
		if is(s - 1) {
			return s - 1
		}
	}
}
