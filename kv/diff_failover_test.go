package kv_test

// FAILOVER's refusals on a primary without replicas, and PSYNC FAILOVER
// sent to a primary, against redis-server (the failover itself runs in
// cmd/shoal/failover_test.go, with replicas).
func init() {
	diffCases["failover-errors"] = []step{
		c("FAILOVER"), c("FAILOVER ABORT"), c("failover abort"), c("FAILOVER TIMEOUT 0"), c("FAILOVER TIMEOUT -5"),
		c("FAILOVER TIMEOUT abc"), c("FAILOVER TIMEOUT"), c("FAILOVER TIMEOUT 10 TIMEOUT 20"), c("FAILOVER TO 127.0.0.1"),
		c("FAILOVER TO 127.0.0.1 abc"), c("FAILOVER TO 127.0.0.1 1 TO 127.0.0.1 2"), c("FAILOVER FORCE"),
		c("FAILOVER FORCE FORCE"), c("FAILOVER ABORT TIMEOUT 10"), c("FAILOVER BOGUS"), c("FAILOVER TO 127.0.0.1 1"),
		c("FAILOVER TO 127.0.0.1 1 FORCE"), c("FAILOVER TIMEOUT 100 FORCE"), c("FAILOVER TO 127.0.0.1 1 TIMEOUT 100 FORCE"),
		c("PSYNC ? -1 FAILOVER"), c("PSYNC 0000000000000000000000000000000000000000 1 failover"),
		c("ROLE"), c("REPLICAOF NO ONE"),
	}
}
