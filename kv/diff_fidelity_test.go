package kv_test

// Differential cases for the fidelity fixes of the reliability issue, kept
// beside diff_test.go's table and run by TestDifferentialAgainstRedis.
func init() {
	diffCases["empty-key-patterns"] = []step{
		s(exact, "SET", "", "x"), c("SET a y"),
		s(sortedBulk, "KEYS", "**"), s(sortedBulk, "KEYS", "?*"), s(sortedBulk, "KEYS", "*"),
		s(sortedBulk, "KEYS", ""), s(sortedBulk, "KEYS", "?"), s(sortedBulk, "KEYS", "*?"), s(sortedBulk, "KEYS", "***"),
		s(scanSorted, "SCAN", "0", "MATCH", "?*", "COUNT", "100"), s(scanSorted, "SCAN", "0", "MATCH", "**", "COUNT", "100"),
	}
	diffCases["incrbyfloat-long-double"] = []step{
		c("INCRBYFLOAT f 12345678901234567890"), c("GET f"), c("INCRBYFLOAT f 1"), c("DEL f"),
		c("INCRBYFLOAT f 1e400"), c("GET f"), c("INCRBYFLOAT f -1e400"), c("GET f"), c("DEL f"),
		c("INCRBYFLOAT f 1e5000"), c("INCRBYFLOAT f inf"), c("INCRBYFLOAT f -inf"), c("INCRBYFLOAT f nan"),
		c("INCRBYFLOAT f 0.1"), c("INCRBYFLOAT f 0.2"), c("INCRBYFLOAT f 3.0e3"), c("INCRBYFLOAT f -0"),
		s(exact, "INCRBYFLOAT", "f", " 1"), s(exact, "INCRBYFLOAT", "f", "1 "), s(exact, "INCRBYFLOAT", "f", ""),
		c("INCRBYFLOAT f 0x10"), c("INCRBYFLOAT f 1e-4950"), c("GET f"),
		c("SET g 1e4932"), c("INCRBYFLOAT g 1e4932"), c("SET g abc"), c("INCRBYFLOAT g 1"),
		c("SET g 1.5"), c("INCRBYFLOAT g 1e309"), c("GET g"), c("INCRBYFLOAT g -1e4932"), c("GET g"),
	}
	diffCases["expiretime-rounds"] = []step{
		c("SET k v PXAT 4102444800700"), c("EXPIRETIME k"), c("PEXPIRETIME k"),
		c("SET k v PXAT 4102444800499"), c("EXPIRETIME k"), c("SET k v PXAT 4102444800500"), c("EXPIRETIME k"),
	}
}
