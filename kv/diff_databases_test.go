package kv_test

// SELECT, MOVE, SWAPDB, COPY ... DB and the per-database commands against
// redis-server, both with their default 16 databases.
func init() {
	diffCases["databases"] = []step{
		c("SET k zero"), c("SELECT 1"), c("GET k"), c("SET k one"), c("DBSIZE"), c("SELECT 0"), c("GET k"), c("DBSIZE"),
		c("MOVE k 1"), c("MOVE k 0"), c("MOVE missing 1"), c("MOVE k 16"), c("MOVE k -1"), c("MOVE k x"),
		c("MOVE k 99999999999"), c("MOVE k"), c("MOVE k 1 2"),
		c("SET m v EX 100"), c("MOVE m 2"), c("EXISTS m"), c("SELECT 2"), c("GET m"), c("TTL m", approxInt),
		c("SELECT 0"), c("RPUSH l a b c"), c("HSET h f v"), c("SADD s x y"), c("ZADD z 1 a 2 b"),
		c("MOVE l 3"), c("MOVE h 3"), c("MOVE s 3"), c("MOVE z 3"), c("SELECT 3"), c("LRANGE l 0 -1"), c("HGETALL h"),
		c("SMEMBERS s", sortedBulk), c("ZRANGE z 0 -1 WITHSCORES"), c("KEYS *", sortedBulk), c("DBSIZE"),
		c("SWAPDB 3 0"), c("DBSIZE"), c("KEYS *", sortedBulk), c("SELECT 0"), c("LRANGE l 0 -1"), c("DBSIZE"),
		c("SWAPDB 0 0"), c("SWAPDB 1 16"), c("SWAPDB -1 0"), c("SWAPDB x 1"), c("SWAPDB 1 x"), c("SWAPDB 99999999999 1"),
		c("SWAPDB 1 99999999999"), c("SWAPDB 1"), c("swapdb 0 1"), c("GET k"), c("swapdb 0 1"),
		c("COPY l l DB 5"), c("COPY l l"), c("COPY l l2 DB 0"), c("COPY l l DB 16"), c("COPY l l DB -1"), c("COPY l l DB x"),
		c("COPY l l DB 99999999999"), c("SELECT 5"), c("LRANGE l 0 -1"), c("RANDOMKEY"), c("SCAN 0"),
		c("SELECT 0"), c("COPY l l DB 5"), c("COPY l l DB 5 REPLACE"), c("RPUSH l d"), c("SELECT 5"), c("LLEN l"),
		c("FLUSHDB"), c("DBSIZE"), c("SELECT 0"), c("DBSIZE"), c("INFO keyspace", maskAvgTTL),
		c("SELECT 7"), c("SET only7 v"), c("INFO keyspace", maskAvgTTL), c("FLUSHALL"), c("DBSIZE"), c("SELECT 0"),
		c("DBSIZE"), c("INFO keyspace", maskAvgTTL),
		c("SELECT 15"), c("SELECT 16"), c("SELECT -1"), c("SET k 15"), c("RESET"), c("GET k"),
	}
	diffCases["databases-multi"] = []step{
		c("MULTI"), c("SET a 0"), c("SELECT 1"), c("SET a 1"), c("MOVE a 2"), c("EXEC"), c("GET a"), c("SELECT 2"),
		c("GET a"), c("SELECT 0"), c("GET a"), c("MULTI"), c("SELECT 99"), c("EXEC"),
		c("SELECT 4"), c("SET w v"), c("WATCH w"), c("SELECT 0"), c("SET w other"), c("SELECT 4"), c("MULTI"),
		c("GET w"), c("EXEC"),
	}
}
