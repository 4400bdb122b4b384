package config

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// Params returns every setting Shoal has, one row each, in the order
// CONFIG GET lists them. Who owns and applies each is noted by its group:
// cmd/shoal reads the startup rows once, to build the server; the run-time
// rows are owned where the fact lives (Table.Own): the store, package kv,
// the listener.
//
// Adding a setting is adding a row here; if it does something new, its
// owner also calls Own with the functions that read and apply it.
func Params() []Param {
	params := []Param{
		// The listeners (cmd/shoal builds the eventloop.Server from
		// them; kv reports the listener's own values, the port bound
		// for ":0" and maxclients after the descriptor cap).
		{Name: "port", Kind: Int(0, 65535), Default: "6379", Usage: "TCP port to listen on (0: none, with --unixsocket)"},
		{Name: "bind", Kind: Text(nil), Default: "127.0.0.1", Usage: "address to bind"},
		{Name: "http-port", Kind: Int(0, 65535), Default: "0", Usage: "TCP port of the HTTP front on --bind (0: off)"},
		{Name: "http-tls-port", Kind: Int(0, 65535), Default: "0", Usage: "TCP port of the HTTP front over TLS on --bind: HTTPS, HTTP/2 by ALPN, with the tls-* certificate settings (0: off)"},
		{Name: "frame-port", Kind: Int(0, 65535), Default: "0", Usage: "TCP port of the binary frame front on --bind (0: off)"},
		{Name: "unixsocket", Kind: Text(nil), Default: "", Usage: "also serve RESP on a Unix socket at this path, removed at exit; a socket file left there is replaced (empty: none; with --port 0, the socket alone)"},
		{Name: "unixsocketperm", Kind: Octal(0, 0o777), Default: "0", Usage: "permissions of the Unix socket, in octal, e.g. 700 (0: as the umask leaves them)"},
		{Name: "maxclients", Kind: Int(1, math.MaxInt32), Default: "10000", RunTime: true, Usage: "maximum simultaneous clients (at most the descriptor limit less 32; CONFIG SET applies to new connections)"},
		{Name: "timeout", Aliases: []string{"idle-timeout"}, Kind: Duration(0), Default: "0", Usage: "close clients idle this long, e.g. 300s (0: never)"},
		{Name: "tcp-keepalive", Kind: Int(0, math.MaxInt32), Default: "300", Usage: "seconds between TCP keepalive probes to idle clients, to notice dead peers (0: off; applies at startup)"},
		{Name: "max-query-buffer", Aliases: []string{"client-query-buffer-limit"}, Kind: Memory(1<<10, 1<<40), Default: "64mb", Usage: "close a client whose unparsed input exceeds this (Redis's client-query-buffer-limit, whose default is 1gb)"},
		{Name: "loops", Kind: Int(0, math.MaxInt16), Default: "0", Usage: "event loops (0: GOMAXPROCS)"},
		{Name: "balancer", Kind: Enum("roundrobin", "leastconn", "loadaware"), Default: "loadaware", Usage: "connection balancer"},
		{Name: "engine", Kind: Enum("native", "gnet"), Default: "native", Usage: "event-loop engine: Shoal's own loops or gnet v2"},
		{Name: "shutdown-timeout", Kind: Duration(time.Millisecond), Default: "30s", Usage: "how long SIGTERM waits for replies to drain"},
		{Name: "pprof-addr", Kind: Text(nil), Default: "", Usage: "serve net/http/pprof on this address, e.g. 127.0.0.1:6060 (empty: off)"},

		// TLS, as redis-server configures it (cmd/shoal/tls.go builds the
		// server's config and rebuilds it on CONFIG SET, as Redis's
		// applyTlsCfg; config.TLSClientConfig is the one Shoal dials out with).
		{Name: "tls-port", Kind: Int(0, 65535), Default: "0", Usage: "TCP port on --bind that serves RESP over TLS (0: off; with --port 0, the only one)"},
		{Name: "tls-cert-file", Kind: Text(nil), Default: "", RunTime: true, Usage: "PEM certificate (chain) of the TLS port; CONFIG SET reloads it"},
		{Name: "tls-key-file", Kind: Text(nil), Default: "", RunTime: true, Usage: "PEM private key of tls-cert-file; CONFIG SET reloads it"},
		{Name: "tls-key-file-pass", Kind: Text(nil), Default: "", RunTime: true, Usage: "passphrase of tls-key-file if it is encrypted (PKCS#8 PBES2, as OpenSSL writes it, or the older PEM form)"},
		{Name: "tls-client-cert-file", Kind: Text(nil), Default: "", RunTime: true, Usage: "PEM certificate Shoal presents when it connects out over TLS (empty: tls-cert-file's)"},
		{Name: "tls-client-key-file", Kind: Text(nil), Default: "", RunTime: true, Usage: "PEM private key of tls-client-cert-file"},
		{Name: "tls-client-key-file-pass", Kind: Text(nil), Default: "", RunTime: true, Usage: "passphrase of tls-client-key-file if it is encrypted"},
		{Name: "tls-ca-cert-file", Kind: Text(nil), Default: "", RunTime: true, Usage: "PEM CA certificates that sign the clients' certificates (and the peers' Shoal connects to)"},
		{Name: "tls-ca-cert-dir", Kind: Text(nil), Default: "", RunTime: true, Usage: "a directory of PEM CA certificates, as tls-ca-cert-file"},
		{Name: "tls-auth-clients", Kind: Enum("no", "yes", "optional"), Default: "yes", RunTime: true, Usage: "clients must present a certificate the CAs signed (yes), may (optional), or are not asked (no)"},
		{Name: "tls-protocols", Kind: Text(nil), Default: "", RunTime: true, Usage: "TLS versions, e.g. \"TLSv1.2 TLSv1.3\" (empty: those two)"},
		{Name: "tls-ciphers", Kind: Text(nil), Default: "", RunTime: true, Usage: "TLS 1.2 cipher suites, colon-separated OpenSSL or IANA names, e.g. ECDHE-RSA-AES128-GCM-SHA256 (empty: Go's defaults)"},
		{Name: "tls-ciphersuites", Kind: Text(nil), Default: "", RunTime: true, Usage: "TLS 1.3 cipher suites, colon-separated, checked as OpenSSL does but not applied: Go's crypto/tls chooses TLS 1.3 suites itself"},
		{Name: "tls-prefer-server-ciphers", Kind: YesNo, Default: "no", RunTime: true, Usage: "taken and kept, no effect: Go's crypto/tls orders cipher suites itself"},
		{Name: "tls-session-caching", Kind: YesNo, Default: "yes", RunTime: true, Usage: "resume TLS sessions with tickets (no: a full handshake each connection)"},
		{Name: "tls-session-cache-size", Kind: Int(0, math.MaxInt32), Default: "20480", RunTime: true, Usage: "taken and kept, no effect: sessions are tickets the clients keep, so the server has no cache to bound"},
		{Name: "tls-session-cache-timeout", Kind: Int(0, math.MaxInt32), Default: "300", RunTime: true, Usage: "seconds a TLS session can be resumed for (0: none is)"},

		// Clients and logging (package kv).
		{Name: "requirepass", Kind: Text(nil), Default: "", RunTime: true, Usage: "password clients must AUTH with (empty: none)"},
		{Name: "aclfile", Kind: Text(nil), Default: "", Usage: "file of ACL users (user <name> <rules>...) loaded at startup and by ACL LOAD, written by ACL SAVE (empty: none)"},
		{Name: "acllog-max-len", Kind: Int(0, math.MaxInt64), Default: "128", RunTime: true, Usage: "entries ACL LOG keeps"},
		{Name: "protected-mode", Kind: YesNo, Default: "yes", RunTime: true, Usage: "yes: without a password, refuse clients from other hosts (as Redis)"},
		{Name: "loglevel", Kind: Enum("debug", "verbose", "notice", "warning", "nothing"), Default: "notice", RunTime: true, Usage: "log level"},
		{Name: "databases", Kind: Int(1, maxDatabases), Default: "16", Usage: "number of databases SELECT picks from (an unused one costs nothing)"},
		{Name: "tracking-table-max-keys", Kind: Int(0, math.MaxInt64), Default: "1000000", RunTime: true, Usage: "keys CLIENT TRACKING remembers for clients that may cache them; past it, random ones are invalidated and forgotten (0: no limit)"},
		{Name: "client-output-buffer-limit", Kind: OutputLimitsKind{}, Default: defaultOutputLimits, RunTime: true, Usage: "close clients whose unread output passes a class's hard limit, or its soft limit for soft-seconds"},
		{Name: "notify-keyspace-events", Kind: Text(nil), Default: "", RunTime: true, Usage: "keyspace notifications to publish: class letters of Redis 7.0 (K E g $ l s h z x e t m d n A; empty: none)"},
		{Name: "busy-reply-threshold", Aliases: []string{"lua-time-limit"}, Kind: Int(0, math.MaxInt64), Default: "5000", RunTime: true, Usage: "milliseconds a script or function runs before other clients get -BUSY and SCRIPT KILL may stop it"},
		{Name: "slowlog-log-slower-than", Kind: Int(-1, math.MaxInt64), Default: "10000", RunTime: true, Usage: "log commands that run longer than this many microseconds in SLOWLOG (-1: none, 0: all; below 10000 every fast command is timed too)"},
		{Name: "latency-tracking", Kind: YesNo, Default: "yes", RunTime: true, Usage: "yes: timed commands feed the per-command histograms of LATENCY HISTOGRAM and INFO latencystats (no: they keep what they have)"},
		{Name: "latency-tracking-info-percentiles", Kind: percentilesKind{}, Default: "50 99 99.9", RunTime: true, Usage: "the percentiles INFO latencystats reports, numbers from 0 to 100 separated by spaces"},
		{Name: "slowlog-max-len", Kind: Int(0, math.MaxInt64), Default: "128", RunTime: true, Usage: "entries SLOWLOG keeps"},
		{Name: "enable-debug-command", Kind: Enum("no", "yes", "local"), Default: "no", Usage: "who may run DEBUG: nobody, everybody, or clients on loopback"},
		{Name: "proto-max-bulk-len", Kind: Memory(1<<20, math.MaxInt64), Default: "512mb", Usage: "largest bulk argument a client may send"},

		// Memory (the store).
		{Name: "maxmemory", Kind: Memory(0, math.MaxInt64), Default: "0", RunTime: true, Usage: "memory limit for data, e.g. 100mb, 1gb (0: none)"},
		{Name: "maxmemory-policy", Kind: Enum("volatile-lru", "volatile-lfu", "volatile-random", "volatile-ttl", "allkeys-lru", "allkeys-lfu", "allkeys-random", "noeviction"), Default: "noeviction", RunTime: true, Usage: "eviction policy"},
		{Name: "maxmemory-samples", Kind: Int(1, math.MaxInt32), Default: "5", RunTime: true, Usage: "keys each eviction weighs per sampled shard"},
		{Name: "lfu-log-factor", Kind: Int(0, math.MaxInt32), Default: "10", RunTime: true, Usage: "how slowly the LFU counter grows with accesses"},
		{Name: "lfu-decay-time", Kind: Int(0, math.MaxInt32), Default: "1", RunTime: true, Usage: "minutes without access for the LFU counter to lose one (0: never)"},
		{Name: "hz", Kind: clampedInt{Int(0, math.MaxInt32), 1, 500}, Default: "10", RunTime: true, Usage: "active expiry cycles a second (taken between 1 and 500, as Redis clamps it)"},
		{Name: "active-expire-effort", Kind: Int(1, 10), Default: "1", RunTime: true, Usage: "how hard each active expiry cycle works: keys sampled per shard, time allowed, and the share of expired keys that makes it go on"},
		{Name: "maxmemory-clients", Kind: MemoryOrPercent(), Default: "0", RunTime: true, Usage: "close the clients using the most buffer memory while all clients use more than this (bytes or a % of maxmemory; 0: no limit)"},

		// Encodings (the store; a change applies from each collection's
		// next write, as in Redis). Small hashes and sorted sets keep
		// each length in one byte: their values stop at 255.
		{Name: "hash-max-listpack-entries", Aliases: []string{"hash-max-ziplist-entries"}, Kind: Int(0, math.MaxInt64), Default: "512", RunTime: true, Usage: "a hash with more fields than this leaves the listpack encoding"},
		{Name: "hash-max-listpack-value", Aliases: []string{"hash-max-ziplist-value"}, Kind: Int(0, 255), Default: "64", RunTime: true, Usage: "a hash with a longer field or value leaves the listpack encoding"},
		{Name: "set-max-intset-entries", Kind: Int(0, math.MaxInt64), Default: "512", RunTime: true, Usage: "a set of integers with more members than this leaves the intset encoding"},
		{Name: "hll-sparse-max-bytes", Kind: Memory(0, math.MaxInt64), Default: "3000", RunTime: true, Usage: "a sparse HyperLogLog that would grow past this many bytes turns dense"},
		{Name: "zset-max-listpack-entries", Aliases: []string{"zset-max-ziplist-entries"}, Kind: Int(0, math.MaxInt64), Default: "128", RunTime: true, Usage: "a sorted set with more members than this leaves the listpack encoding"},
		{Name: "zset-max-listpack-value", Aliases: []string{"zset-max-ziplist-value"}, Kind: Int(0, 255), Default: "64", RunTime: true, Usage: "a sorted set with a longer member leaves the listpack encoding"},
		{Name: "list-max-listpack-size", Aliases: []string{"list-max-ziplist-size"}, Kind: Checked(Int(-5, 32767), nonZero), Default: "-2", RunTime: true, Usage: "a list node's size: -1..-5 for 4..64 KiB, or a count of elements (each node still at most 8 KiB)"},
		{Name: "stream-node-max-bytes", Kind: Memory(0, math.MaxInt64), Default: "4096", RunTime: true, Usage: "a stream starts a new node when its last one would reach this many bytes (0: no bound)"},
		{Name: "stream-node-max-entries", Kind: Int(0, math.MaxInt64), Default: "100", RunTime: true, Usage: "a stream starts a new node when its last one holds this many entries, deleted ones included (0: no bound)"},
		{Name: "list-compress-depth", Kind: Checked(Int(0, math.MaxInt32), onlyZeroDepth), Default: "0", RunTime: true, Usage: "Shoal keeps list nodes uncompressed: only 0"},

		// The process (cmd/shoal).
		{Name: "pidfile", Kind: Text(nil), Default: "", Usage: "write the process id to this file at startup and remove it at exit (empty: none)"},
		{Name: "logfile", Kind: Text(nil), Default: "", Usage: "append the log to this file, opened in --dir (empty: standard error)"},

		// Persistence (package kv, the aof.Writer). appendonly is chosen
		// at startup; CONFIG SET takes only the value it has.
		// Snapshots (package kv: kv/save*.go). save is "" by default, not
		// Redis's "3600 1 300 100 60 10000": with a policy, a stop and
		// every burst of writes leave a dump.rdb in the working directory,
		// and the next start in that directory silently loads it; Shoal is
		// started in arbitrary directories (tests, scripts), so saving is
		// asked for, by --save or a configuration file.
		{Name: "save", Kind: savePolicyKind{}, Default: "", RunTime: true, Usage: "RDB snapshot policy: \"seconds changes\" pairs, e.g. \"3600 1 300 100 60 10000\" (Redis's default); a BGSAVE starts when that many writes happened in that many seconds; \"\" (Shoal's default): none, SAVE and BGSAVE still work"},
		{Name: "dbfilename", Kind: Text(fileName), Default: "dump.rdb", Usage: "name of the RDB snapshot file, in --dir; loaded at startup when appendonly is no"},
		{Name: "rdbcompression", Kind: YesNo, Default: "yes", RunTime: true, Usage: "yes: LZF-compress strings in snapshots when that saves space"},
		{Name: "rdbchecksum", Kind: YesNo, Default: "yes", Usage: "yes: end snapshots with a CRC-64 checksum (no: a zero checksum, not checked at load)"},
		{Name: "stop-writes-on-bgsave-error", Kind: YesNo, Default: "yes", RunTime: true, Usage: "yes: after a failed background save, with a save policy set, writes get -MISCONF until a save succeeds"},
		{Name: "appendonly", Kind: YesNo, Default: "no", RunTime: true, Usage: "yes: log every write to the append-only file and load it at startup"},
		{Name: "appendfsync", Kind: Enum("always", "everysec", "no"), Default: "everysec", RunTime: true, Usage: "always (reply after fdatasync, grouped per batch), everysec or no"},
		{Name: "appendfilename", Kind: Text(fileName), Default: "appendonly.aof", Usage: "name of the append-only file, in --dir"},
		{Name: "dir", Kind: Text(nil), Default: ".", Usage: "working directory; the append-only file is created in it"},
		{Name: "aof-load-truncated", Kind: YesNo, Default: "yes", Usage: "yes: a truncated last command in the append-only file is cut off at load"},
		{Name: "auto-aof-rewrite-percentage", Kind: Int(0, math.MaxInt32), Default: "100", RunTime: true, Usage: "rewrite the append-only file when it grew by this percentage (0: never)"},
		{Name: "auto-aof-rewrite-min-size", Kind: Memory(0, math.MaxInt64), Default: "64mb", RunTime: true, Usage: "size below which the append-only file is not rewritten automatically"},

		// Replication, replica side (package kv: kv/repl*.go). replicaof
		// is read at startup; REPLICAOF changes it at run time.
		{Name: "replicaof", Aliases: []string{"slaveof"}, Kind: Text(checkReplicaOf), Default: "", Usage: "\"host port\" of the primary to replicate at startup (empty: a primary)"},
		{Name: "masterauth", Kind: Text(nil), Default: "", RunTime: true, Usage: "password the replica AUTHs with on its primary (empty: none)"},
		{Name: "masteruser", Kind: Text(nil), Default: "", RunTime: true, Usage: "user the replica AUTHs as on its primary, with masterauth (empty: the default user)"},
		{Name: "replica-read-only", Aliases: []string{"slave-read-only"}, Kind: YesNo, Default: "yes", RunTime: true, Usage: "yes: a replica refuses writes from its clients with -READONLY"},
		{Name: "replica-serve-stale-data", Aliases: []string{"slave-serve-stale-data"}, Kind: YesNo, Default: "yes", RunTime: true, Usage: "no: while its link to the primary is down, a replica answers -MASTERDOWN to commands other than a few (INFO, PING, REPLICAOF, ...)"},
		{Name: "replica-priority", Aliases: []string{"slave-priority"}, Kind: Int(0, math.MaxInt32), Default: "100", RunTime: true, Usage: "Sentinel promotes the replica with the lowest priority first (0: never), read from INFO"},
		{Name: "lazyfree-lazy-expire", Kind: YesNo, Default: "no", RunTime: true, Usage: "yes: a key found expired is logged to the AOF and replicas as UNLINK, not DEL (kv; deleting is O(1) here either way, the collector frees the value)"},
		{Name: "lazyfree-lazy-eviction", Kind: YesNo, Default: "no", RunTime: true, Usage: "yes: a key evicted under maxmemory is logged to the AOF and replicas as UNLINK, not DEL (kv; deleting is O(1) here either way)"},
		{Name: "replica-ignore-maxmemory", Aliases: []string{"slave-ignore-maxmemory"}, Kind: YesNo, Default: "yes", RunTime: true, Usage: "yes: a replica neither evicts nor refuses its primary's writes over maxmemory (the primary's DELs of its evictions keep it in line)"},
		{Name: "replica-announced", Kind: YesNo, Default: "yes", RunTime: true, Usage: "no: Sentinel leaves this replica out of its replies, read from INFO"},
		{Name: "repl-timeout", Kind: Int(1, math.MaxInt32), Default: "60", RunTime: true, Usage: "seconds without a byte from the primary after which a replica drops the link and reconnects"},
		{Name: "repl-ping-replica-period", Aliases: []string{"repl-ping-slave-period"}, Kind: Int(1, math.MaxInt32), Default: "10", RunTime: true, Usage: "seconds between a primary's PINGs to its replicas"},

		// Replication, primary side (package kv: kv/primary*.go). The
		// backlog is created when the first replica connects, as Redis's.
		{Name: "repl-backlog-size", Kind: Memory(16<<10, math.MaxInt64), Default: "1mb", RunTime: true, Usage: "bytes of the replication stream kept for replicas that reconnect (partial resync)"},
		{Name: "repl-backlog-ttl", Kind: Int(0, math.MaxInt32), Default: "3600", RunTime: true, Usage: "seconds without replicas after which the backlog is freed (0: never)"},
		{Name: "repl-diskless-sync", Kind: YesNo, Default: "yes", RunTime: true, Usage: "yes: a full sync streams the snapshot as $EOF:<mark> to replicas that can take it; it is made in memory either way"},
		{Name: "repl-diskless-sync-delay", Kind: Int(0, math.MaxInt32), Default: "5", RunTime: true, Usage: "seconds a primary waits, from the first replica asking for a diskless full sync, for more to share its snapshot (0: at once)"},
		{Name: "repl-diskless-sync-max-replicas", Kind: Int(0, math.MaxInt32), Default: "0", RunTime: true, Usage: "a diskless full sync starts before repl-diskless-sync-delay once this many replicas wait (0: no such limit)"},
		{Name: "min-replicas-to-write", Aliases: []string{"min-slaves-to-write"}, Kind: Int(0, math.MaxInt32), Default: "0", RunTime: true, Usage: "writes are refused with -NOREPLICAS unless this many replicas acknowledged within min-replicas-max-lag seconds (0: off)"},
		{Name: "min-replicas-max-lag", Aliases: []string{"min-slaves-max-lag"}, Kind: Int(0, math.MaxInt32), Default: "10", RunTime: true, Usage: "seconds since its last ACK under which a replica counts for min-replicas-to-write"},

		// Redis Cluster (package cluster). The first three are read at
		// startup; the others are owned by the node's cluster.State.
		{Name: "cluster-enabled", Kind: YesNo, Default: "no", Usage: "yes: run as a Redis Cluster node: hash slots on the data path (MOVED, ASK, CROSSSLOT), the CLUSTER command, the cluster bus on cluster-port (native engine only)"},
		{Name: "cluster-config-file", Kind: Text(fileName), Default: "nodes.conf", Usage: "the node's cluster configuration (Redis's nodes.conf format), in --dir: written on every change, read at startup"},
		{Name: "cluster-port", Kind: Int(0, 65535), Default: "0", Usage: "TCP port of the cluster bus (0: port + 10000)"},
		{Name: "cluster-node-timeout", Kind: Int(1, math.MaxInt64), Default: "15000", RunTime: true, Usage: "milliseconds without a PONG after which a node is flagged PFAIL; a majority of primaries' reports make it FAIL"},
		{Name: "cluster-announce-ip", Kind: Text(nil), Default: "", RunTime: true, Usage: "IP this node gives other nodes on the bus (empty: the address they reach it on)"},
		{Name: "cluster-announce-port", Kind: Int(0, 65535), Default: "0", RunTime: true, Usage: "client port this node gives other nodes (0: port)"},
		{Name: "cluster-announce-bus-port", Kind: Int(0, 65535), Default: "0", RunTime: true, Usage: "bus port this node gives other nodes (0: cluster-port)"},
		{Name: "cluster-announce-hostname", Kind: Text(nil), Default: "", RunTime: true, Usage: "hostname this node gives other nodes in the bus's hostname extension, shown by CLUSTER NODES and SHARDS (empty: none)"},
		{Name: "cluster-require-full-coverage", Kind: YesNo, Default: "yes", RunTime: true, Usage: "yes: the cluster answers -CLUSTERDOWN while a slot is unassigned or its owner failed"},
		{Name: "cluster-allow-reads-when-down", Kind: YesNo, Default: "no", RunTime: true, Usage: "yes: a node of a failed cluster still serves reads of its slots"},
		{Name: "cluster-replica-validity-factor", Aliases: []string{"cluster-slave-validity-factor"}, Kind: Int(0, math.MaxInt32), Default: "10", RunTime: true, Usage: "a replica whose primary failed runs no election when it last heard from it more than node-timeout * this + repl-ping-replica-period ago (0: always runs one)"},
		{Name: "cluster-replica-no-failover", Aliases: []string{"cluster-slave-no-failover"}, Kind: YesNo, Default: "no", RunTime: true, Usage: "yes: this replica never runs an election when its primary fails (CLUSTER FAILOVER still works)"},
		{Name: "cluster-migration-barrier", Kind: Int(0, math.MaxInt32), Default: "1", RunTime: true, Usage: "inert for now: replicas do not migrate to orphaned primaries yet (README, Known gaps)"},
		{Name: "cluster-allow-replica-migration", Kind: YesNo, Default: "yes", RunTime: true, Usage: "yes: a primary that loses its last slot to another becomes its replica (no: only when that node took exactly its slots); replicas do not migrate to orphaned primaries yet (README, Known gaps)"},
	}
	return append(params, inertParams()...)
}

// maxDatabases bounds the databases setting: the server keeps a pointer
// per database (Redis accepts up to INT_MAX and allocates a struct each).
const maxDatabases = 1 << 20

// clampedInt is an integer the kind accepts in its range and takes as the
// nearest value between lo and hi, as Redis takes hz.
type clampedInt struct {
	IntKind
	lo, hi int64
}

// Parse implements Kind.
func (k clampedInt) Parse(s string) (string, error) {
	v, err := k.IntKind.Parse(s)
	if err != nil {
		return "", err
	}
	n, _ := strconv.ParseInt(v, 10, 64)
	return strconv.FormatInt(min(max(n, k.lo), k.hi), 10), nil
}

// savePolicyKind is the save setting's kind: its canonical form is the
// pairs separated by one space, as CONFIG GET save shows them in Redis.
type savePolicyKind struct{}

// Parse implements Kind.
func (savePolicyKind) Parse(s string) (string, error) {
	if err := checkSavePolicy(s); err != nil {
		return "", err
	}
	return strings.Join(strings.Fields(s), " "), nil
}

// Values implements Kind.
func (savePolicyKind) Values() string { return `"seconds changes" pairs, or ""` }

// errSavePolicy is Redis's reason for a bad save setting, as it writes it.
//
//lint:ignore ST1005 Redis's text, which clients compare
var errSavePolicy = errors.New("Invalid save parameters")

// checkSavePolicy accepts the save setting as Redis 7.0 does: pairs of
// seconds (at least 1) and changes (at least 0), or "" for none.
func checkSavePolicy(v string) error {
	f := strings.Fields(v)
	if len(f)%2 != 0 {
		return errSavePolicy
	}
	for i, n := range f {
		x, err := strconv.ParseInt(n, 10, 64)
		if err != nil || (i%2 == 0 && x < 1) || x < 0 {
			return errSavePolicy
		}
	}
	return nil
}

// checkReplicaOf accepts the replicaof setting: empty, or a host and a
// port from 0 to 65535, as Redis's config file takes "replicaof host port".
func checkReplicaOf(v string) error {
	if v == "" {
		return nil
	}
	f := strings.Fields(v)
	if len(f) != 2 {
		return fmt.Errorf("want \"host port\", not %q", v)
	}
	if p, err := strconv.Atoi(f[1]); err != nil || p < 0 || p > 65535 {
		return fmt.Errorf("port %q is not a number from 0 to 65535", f[1])
	}
	return nil
}

func nonZero(v string) error {
	if v == "0" {
		return errors.New("0 is no size: want -1..-5 (4..64 KiB per node) or a count of elements")
	}
	return nil
}

func onlyZeroDepth(v string) error {
	if v != "0" {
		return errors.New("shoal does not compress list nodes; list-compress-depth only accepts 0")
	}
	return nil
}

func fileName(v string) error {
	if v == "" || strings.ContainsRune(v, '/') {
		return errors.New("want a file name without a directory (use --dir)")
	}
	return nil
}

// inertParams are Redis directives that the sample redis.conf and common
// images set and that Shoal takes only at the value they set (Redis's
// default), where it does what Redis does or what the directive has no
// bearing on; any other value is refused with the reason. So a
// configuration file written for redis-server loads, and none of its
// settings is silently ignored. The why of each is its usage line.
func inertParams() []Param {
	yes, no := YesNo, YesNo
	rows := []struct {
		name string
		kind Kind
		def  string
		why  string
	}{
		{"daemonize", no, "no", "Shoal does not fork; run it under a supervisor (systemd, docker)"},
		{"supervised", Enum("no", "upstart", "systemd", "auto"), "no", "Shoal does not notify a supervisor"},
		{"always-show-logo", no, "no", "Shoal prints no logo"},
		{"set-proc-title", yes, "yes", "Shoal's process title is its command line"},
		{"proc-title-template", Text(nil), "{title} {listen-addr} {server-mode}", "Shoal does not rewrite its process title"},
		{"tcp-backlog", Int(0, math.MaxInt32), "511", "Go listens with the kernel's somaxconn as the backlog, which also caps Redis's"},
		{"dynamic-hz", yes, "yes", "Shoal's background tasks do not scale with the clients"},
		{"activerehashing", yes, "yes", "Shoal's hash tables grow in one step: there is no incremental rehash to drive"},
		{"latency-monitor-threshold", Int(0, math.MaxInt64), "0", "Shoal records no latency events (LATENCY LATEST is empty)"},
		{"lazyfree-lazy-server-del", no, "no", "deleting a value is O(1) here whatever its size, the collector frees it"},
		{"lazyfree-lazy-user-del", no, "no", "deleting a value is O(1) here whatever its size, the collector frees it"},
		{"lazyfree-lazy-user-flush", no, "no", "deleting a value is O(1) here whatever its size, the collector frees it"},
		{"jemalloc-bg-thread", yes, "yes", "Shoal's memory is the Go runtime's and its own mappings, not jemalloc's"},
		{"disable-thp", yes, "yes", "Shoal leaves transparent huge pages as the system sets them"},
		{"oom-score-adj", Enum("no", "yes", "relative", "absolute"), "no", "Shoal does not set its OOM score"},
		{"oom-score-adj-values", Text(nil), "0 200 800", "Shoal does not set its OOM score"},
		{"aof-timestamp-enabled", no, "no", "Shoal writes no timestamps in the append-only file"},
		{"aof-rewrite-incremental-fsync", yes, "yes", "the rewrite's file is synced before it replaces the old one, as Redis does at the end"},
		{"no-appendfsync-on-rewrite", no, "no", "appendfsync keeps applying during a rewrite"},
		{"aof-use-rdb-preamble", yes, "yes", "until snapshots land (the RDB issue), a rewrite writes commands only"},
		{"appenddirname", Text(nil), "appendonlydir", "Shoal keeps one append-only file, appendfilename in dir"},
		{"rdb-save-incremental-fsync", yes, "yes", "a snapshot is synced once, before it replaces the old file"},
		{"rdb-del-sync-files", no, "no", "a primary makes a replica's snapshot in memory and writes no file for it; a replica keeps its primary's snapshot as dbfilename only with a save policy"},
		{"replica-lazy-flush", no, "no", "deleting a value is O(1) here whatever its size, the collector frees the old data set"},
		{"repl-diskless-load", Enum("disabled", "on-empty-db", "swapdb"), "disabled", "a replica always stores its primary's snapshot in a file in dir and loads it from there, as Redis's disabled"},
		{"repl-disable-tcp-nodelay", no, "no", "the connections to replicas keep TCP_NODELAY, as Redis's no"},
	}
	params := make([]Param, len(rows))
	for i, r := range rows {
		def, err := r.kind.Parse(r.def)
		if err != nil {
			panic("config: default of " + r.name + ": " + err.Error())
		}
		why := r.why
		params[i] = Param{
			Name: r.name, Default: r.def, RunTime: true, Inert: true,
			Usage: "taken only as " + strconv.Quote(r.def) + ": " + why,
			Kind: Checked(r.kind, func(v string) error {
				if v != def {
					return fmt.Errorf("shoal takes only %q: %s", r.def, why)
				}
				return nil
			}),
		}
		if strings.HasPrefix(r.name, "lazyfree-") { // every value does what Redis does
			params[i].Kind, params[i].Usage = r.kind, "any value is taken: "+why
		}
	}
	return params
}
