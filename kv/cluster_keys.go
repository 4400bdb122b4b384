package kv

import "github.com/shoalkv/shoal/cluster"

// The keyspace as the cluster sees it: database 0's keys by slot. There is
// no per-slot index yet: each call lists the keyspace and hashes every key
// (README, Known gaps), which is fine for redis-cli --cluster create,
// check and a reshard of a small keyspace, and slow for a large one.

// KeysInSlot counts database 0's keys in slot (cluster.Data).
func (h *Handler) KeysInSlot(slot int) int {
	n := 0
	for _, k := range h.db(0).Keys([]byte("*")) {
		if cluster.KeySlot(k) == slot {
			n++
		}
	}
	return n
}

// keysInSlot returns up to count keys of database 0 in slot.
func (h *Handler) keysInSlot(slot, count int) [][]byte {
	var out [][]byte
	for _, k := range h.db(0).Keys([]byte("*")) {
		if len(out) >= count {
			break
		}
		if cluster.KeySlot(k) == slot {
			out = append(out, k)
		}
	}
	return out
}

// DeleteKeysInSlot deletes database 0's keys in slot, which this node lost
// to another owner (cluster.Data).
func (h *Handler) DeleteKeysInSlot(slot int) {
	if keys := h.keysInSlot(slot, 1<<31); len(keys) > 0 {
		h.db(0).Del(keys)
	}
}

// ReplOffset is the replication offset the bus's PINGs carry (cluster.Data).
func (h *Handler) ReplOffset() uint64 { return uint64(max(h.repl.offset.Load(), 0)) }
