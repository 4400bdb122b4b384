package kv_test

// COPY and OBJECT against redis-server, on strings (each data type's own
// differential cases cover its collections).
func init() {
	diffCases["copy-object"] = []step{
		c("SET s hello"), c("SET n 123"), c("SET big 12345678901"), c("SET neg -5"),
		s(exact, "SET", "long", "0123456789012345678901234567890123456789012345"),
		c("COPY s s2"), c("GET s2"), c("COPY s s2"), c("COPY s s2 REPLACE"), c("COPY n s2 replace"), c("GET s2"),
		c("COPY s s"), c("COPY missing x"), c("COPY s x DB 0"), c("COPY s y DB 1"), c("COPY s y DB x"), c("COPY s y DB"),
		c("COPY s y FOO"), c("COPY s y REPLACE DB 0"), c("COPY s"), c("EXISTS y"),
		c("SET t v EX 100"), c("COPY t t2"), c("TTL t2", approxInt),
		c("OBJECT ENCODING s"), c("OBJECT ENCODING n"), c("OBJECT ENCODING big"), c("OBJECT ENCODING neg"),
		c("OBJECT ENCODING long"), c("OBJECT ENCODING missing"), c("OBJECT ENCODING"), c("OBJECT ENCODING a b"),
		c("OBJECT REFCOUNT n"), c("OBJECT REFCOUNT s"), c("OBJECT REFCOUNT big"), c("OBJECT REFCOUNT missing"),
		c("OBJECT IDLETIME s", approxInt), c("OBJECT IDLETIME missing"), c("OBJECT FREQ s"), c("OBJECT FREQ missing"),
		c("OBJECT HELP"), c("object help"), c("OBJECT FOO"), c("OBJECT"),
	}
}
