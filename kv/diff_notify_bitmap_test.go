package kv_test

// Keyspace events of the bitmap and HyperLogLog commands against
// redis-server: "new" when a write makes the key, "setbit" only when bits
// changed or the string was made or grown, BITOP's "set" or "del", and
// "pfadd" for PFADD and PFMERGE.
func init() {
	notifyCases["bitmaps"] = []step{
		c("SETBIT b 3 1"), c("SETBIT b 3 1"), c("SETBIT b 3 0"), c("SETBIT b 100 0"), c("SETBIT b 1 0"), c("GETBIT b 3"),
		c("GETBIT nope 3"), c("BITCOUNT b"), c("BITPOS b 1"), c("BITFIELD f SET u8 0 1"), c("BITFIELD f SET u8 0 1"),
		c("BITFIELD f GET u8 0"), c("BITFIELD g OVERFLOW FAIL INCRBY u2 0 9"), c("BITFIELD g OVERFLOW FAIL INCRBY u2 0 9"),
		c("BITFIELD f INCRBY u8 #3 0"), c("BITFIELD_RO f GET u8 0"), c("BITOP OR d b f"), c("BITOP OR d b f"),
		c("BITOP AND d nope nope2"), c("BITOP AND d nope nope2"), c("BITOP NOT d2 b"), c("LPUSH l a"), c("SETBIT l 1 1"),
	}
	notifyCases["hyperloglog"] = []step{
		c("PFADD h"), c("PFADD h a b"), c("PFADD h a"), c("PFCOUNT h"), c("PFCOUNT h nope"), c("PFADD h2 c"),
		c("PFMERGE m h h2"), c("PFMERGE m h"), c("PFMERGE h2"), c("PFDEBUG TODENSE h"), c("SET s x"), c("PFADD s a"),
		c("PFMERGE s h"),
	}
}
