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
	diffCases["expiretime-rounds"] = []step{
		c("SET k v PXAT 4102444800700"), c("EXPIRETIME k"), c("PEXPIRETIME k"),
		c("SET k v PXAT 4102444800499"), c("EXPIRETIME k"), c("SET k v PXAT 4102444800500"), c("EXPIRETIME k"),
	}
}
