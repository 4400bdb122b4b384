package kv

import (
	"math"

	"github.com/shoalkv/shoal/internal/ascii"
	"github.com/shoalkv/shoal/store"
)

// What the commands of the collection types (hashes, lists, sets, sorted
// sets) share: reading one, removing from one, scanning one. Each type's
// file holds its commands; these hold the steps that are the same for all.

// viewCollection runs fn with key's value as a T (nil when missing) under its
// shard's read lock; a value of another kind than kind is answered WRONGTYPE
// and reported false.
func viewCollection[T store.Object](cl *client, key []byte, kind store.Kind, fn func(T)) bool {
	err := cl.db().View(key, kind, func(o store.Object) {
		c, _ := o.(T)
		fn(c)
	})
	if err != nil {
		cl.writeError(err.Error())
		return false
	}
	return true
}

// writeLength is HLEN, LLEN, SCARD and ZCARD: the number of elements of
// key's collection, 0 when it is missing.
func writeLength(cl *client, key []byte, kind store.Kind) {
	n := 0
	if viewCollection(cl, key, kind, func(c store.Object) {
		if c != nil {
			n = c.Len()
		}
	}) {
		cl.writeInt(int64(n))
	}
}

// updateExisting runs change on key's collection under its shard's lock,
// if key holds one, and reports whether it did and whether change emptied
// it (the store then deletes the key). err is WRONGTYPE for a key of
// another kind than kind.
func updateExisting[T store.Object](cl *client, key []byte, kind store.Kind, change func(c T)) (found, emptied bool, err error) {
	err = cl.db().Update(key, kind, 0, func(o store.Object) store.Object {
		if o == nil {
			return nil
		}
		c := o.(T)
		change(c)
		found, emptied = true, c.Len() == 0
		return c
	})
	return found, emptied, err
}

// removeMembers is HDEL, SREM, ZREM, LREM and the ZREMRANGEBY commands: remove
// takes elements out of key's collection (which exists) and says how many.
// The reply is that count; when it is not 0, event is announced in class,
// with del when the key was emptied (and so deleted).
func removeMembers[T store.Object](cl *client, key []byte, kind store.Kind, class uint32, event string, remove func(c T) int) {
	removed := 0
	_, emptied, err := updateExisting(cl, key, kind, func(c T) { removed = remove(c) })
	if err != nil {
		cl.writeError(err.Error())
		return
	}
	cl.writeInt(int64(removed))
	if removed > 0 {
		cl.notifyRemoved(class, event, key, emptied)
	}
}

// removeEach is HDEL, SREM and ZREM: remove takes each of members out of
// key's collection, reporting whether it was there, as removeMembers
// counts. It stops at an emptied collection, as Redis does: nothing is left
// to remove.
func removeEach[T store.Object](cl *client, key []byte, kind store.Kind, class uint32, event string, members [][]byte, remove func(c T, member []byte) bool) {
	removeMembers(cl, key, kind, class, event, func(c T) int {
		removed := 0
		for _, m := range members {
			if remove(c, m) {
				removed++
				if c.Len() == 0 {
					break
				}
			}
		}
		return removed
	})
}

// scanCollection is HSCAN, SSCAN and ZSCAN: key cursor [MATCH pattern]
// [COUNT count]. A missing key is an empty last page, answered before the
// options are read, as Redis does; page writes one page of an existing one.
func scanCollection[T store.Object](cl *client, args [][]byte, kind store.Kind, page func(c T, cursor uint64, a scanArgs)) {
	cursor, ok := parseCursor(args[2])
	if !ok {
		cl.writeError(errInvalidCursor)
		return
	}
	viewCollection(cl, args[1], kind, func(o store.Object) {
		if o == nil {
			writeScanPage(cl, 0, nil)
			return
		}
		a, errText := parseScanArgs(args[3:], false)
		if errText != "" {
			cl.writeError(errText)
			return
		}
		page(o.(T), cursor, a)
	})
}

// randMaxCount bounds the repeated sampling (negative count) of
// HRANDFIELD, SRANDMEMBER and ZRANDMEMBER: Redis would build a reply of any size; Shoal refuses
// past this many elements rather than hold gigabytes of output.
const randMaxCount = 1 << 22

const errRandRange = "ERR value is out of range, value must between -9223372036854775807 and 9223372036854775807"

// parseRandCount parses the count of HRANDFIELD, SRANDMEMBER and
// ZRANDMEMBER: an integer
// in [-2^63+1, 2^63-1].
func parseRandCount(b []byte) (int64, string) {
	l, ok := ascii.ParseInt(b)
	if !ok {
		return 0, errNotInteger
	}
	if l == math.MinInt64 {
		return 0, errRandRange
	}
	return l, ""
}
