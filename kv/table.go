package kv

import "github.com/shoalkv/shoal/internal/ascii"

// commandTable is the core commands: connection, server, string and
// generic key commands. Every command, here or in a family's table, is one
// entry that says all there is about it: its COMMAND INFO metadata exactly
// as redis-server 7.0 reports it (checked by the differential tests), its
// function, how the append-only file logs it (log: required with the write
// flag, refused without it; aof.go), and its COMMAND DOCS text (summaries
// written for Shoal; since, group and complexity as Redis's, checked by
// TestCommandDocsMatchRedis). Subcommands are named "parent|sub" and follow
// their parent.
//
// To add a command, add its entry to the table of its group, and nothing
// elsewhere: here for the core; in its type's file for a hash, list, set or
// sorted-set command (hash.go, list.go, set.go, zset.go; the blocking
// sorted-set pops in zset_block.go); multi.go, pubsub.go or object.go for
// transactions, pub/sub, COPY and OBJECT. A new data type is a new file
// with one registerFamily(family{kind, rewrite, commands}) call, its AOF
// rewriter included. init (indexFamilies) refuses an entry without a
// function, docs or key specs, or whose log rule does not fit it.
var commandTable = []*command{
	{
		name: "ping", arity: -1, fn: cmdPing,
		flags: "fast", acl: "@fast @connection", tips: "request_policy:all_shards response_policy:all_succeeded",
		doc: commandDoc{"Returns PONG, or the argument.", "1.0.0", "connection", "O(1)"},
	},
	{
		name: "echo", arity: 2, fn: cmdEcho,
		flags: "loading stale fast", acl: "@fast @connection",
		doc: commandDoc{"Returns the given string.", "1.0.0", "connection", "O(1)"},
	},
	{
		name: "quit", arity: -1, fn: cmdQuit,
		flags: "noscript loading stale fast no_auth allow_busy", acl: "@fast @connection",
		doc: commandDoc{"Closes the connection after replying.", "1.0.0", "connection", "O(1)"},
	},
	{
		name: "hello", arity: -1, fn: cmdHello,
		flags: "noscript loading stale fast no_auth allow_busy", acl: "@fast @connection",
		doc: commandDoc{"Handshakes: picks RESP2 or RESP3, optionally authenticates and names the connection.", "6.0.0", "connection", "O(1)"},
	},
	{
		name: "auth", arity: -2, fn: cmdAuth,
		flags: "noscript loading stale fast no_auth allow_busy", acl: "@fast @connection",
		doc: commandDoc{"Authenticates the connection.", "1.0.0", "connection", "O(N) where N is the number of passwords defined for the user"},
	},
	{
		name: "select", arity: 2, fn: cmdSelect,
		flags: "loading stale fast", acl: "@fast @connection",
		doc: commandDoc{"Changes the selected database.", "1.0.0", "connection", "O(1)"},
	},
	{
		name: "move", arity: 3, fn: cmdMove, log: logIfOne,
		flags: "write fast", acl: "@keyspace @write @fast",
		firstKey: 1, lastKey: 1, step: 1, keySpecs: []keySpec{{flags: "RW access update", index: 1, keyStep: 1}},
		doc: commandDoc{"Moves a key to another database.", "1.0.0", "generic", "O(1)"},
	},
	{
		name: "swapdb", arity: 3, fn: cmdSwapDB, log: logEveryStripe,
		flags: "write fast", acl: "@keyspace @write @fast @dangerous",
		doc: commandDoc{"Swaps two databases: the clients of each see the other's keys.", "4.0.0", "server",
			"O(N) where N is the count of clients watching or blocking on keys from both databases."},
	},
	{
		name: "reset", arity: 1, fn: cmdReset,
		flags: "noscript loading stale fast no_auth allow_busy", acl: "@fast @connection",
		doc: commandDoc{"Resets the connection's state.", "6.2.0", "connection", "O(1)"},
	},
	{
		name: "client", arity: -2, fn: containerOnly,
		acl: "@slow",
		doc: commandDoc{"Connection management commands.", "2.4.0", "connection", "Depends on subcommand."},
	},
	{
		name: "client|kill", arity: -3, fn: cmdClientKill,
		flags: "admin noscript loading stale", acl: "@admin @slow @dangerous @connection",
		doc: commandDoc{"Closes connections by address or filter.", "2.4.0", "connection", "O(N) where N is the number of client connections"},
	},
	{
		name: "client|setname", arity: 3, fn: cmdClientSetName,
		flags: "noscript loading stale", acl: "@slow @connection",
		doc: commandDoc{"Names this connection.", "2.6.9", "connection", "O(1)"},
	},
	{
		name: "client|tracking", arity: -3, fn: cmdClientTracking,
		flags: "noscript loading stale", acl: "@slow @connection",
		doc: commandDoc{"Turns server-assisted client-side caching on or off for this connection.", "6.0.0", "connection", "O(1). Some options may introduce additional complexity."},
	},
	{
		name: "client|caching", arity: 3, fn: cmdClientCaching,
		flags: "noscript loading stale", acl: "@slow @connection",
		doc: commandDoc{"Says whether the keys of the next command are tracked (OPTIN or OPTOUT mode).", "6.0.0", "connection", "O(1)"},
	},
	{
		name: "client|getredir", arity: 2, fn: cmdClientGetRedir,
		flags: "noscript loading stale", acl: "@slow @connection",
		doc: commandDoc{"Returns the id of the client that gets this connection's invalidation messages.", "6.0.0", "connection", "O(1)"},
	},
	{
		name: "client|trackinginfo", arity: 2, fn: cmdClientTrackingInfo,
		flags: "noscript loading stale", acl: "@slow @connection",
		doc: commandDoc{"Describes this connection's client-side caching.", "6.2.0", "connection", "O(1)"},
	},
	{
		name: "client|info", arity: 2, fn: cmdClientInfo,
		flags: "noscript loading stale", acl: "@slow @connection", tips: "nondeterministic_output",
		doc: commandDoc{"Describes this connection.", "6.2.0", "connection", "O(1)"},
	},
	{
		name: "client|list", arity: -2, fn: cmdClientList,
		flags: "admin noscript loading stale", acl: "@admin @slow @dangerous @connection", tips: "nondeterministic_output",
		doc: commandDoc{"Lists the open connections.", "2.4.0", "connection", "O(N) where N is the number of client connections"},
	},
	{
		name: "client|id", arity: 2, fn: cmdClientID,
		flags: "noscript loading stale", acl: "@slow @connection",
		doc: commandDoc{"Returns this connection's unique id.", "5.0.0", "connection", "O(1)"},
	},
	{
		name: "client|help", arity: 2, fn: cmdClientHelp,
		flags: "loading stale", acl: "@slow @connection",
		doc: commandDoc{"Lists the CLIENT subcommands.", "5.0.0", "connection", "O(1)"},
	},
	{
		name: "client|getname", arity: 2, fn: cmdClientGetName,
		flags: "noscript loading stale", acl: "@slow @connection",
		doc: commandDoc{"Returns this connection's name.", "2.6.9", "connection", "O(1)"},
	},
	{
		name: "info", arity: -1, fn: cmdInfo,
		flags: "loading stale", acl: "@slow @dangerous", tips: "nondeterministic_output request_policy:all_shards response_policy:special",
		doc: commandDoc{"Returns server information and statistics.", "1.0.0", "server", "O(1)"},
	},
	{
		name: "config", arity: -2, fn: containerOnly,
		acl: "@slow",
		doc: commandDoc{"Server configuration commands.", "2.0.0", "server", "Depends on subcommand."},
	},
	{
		name: "config|get", arity: -3, fn: cmdConfigGet,
		flags: "admin noscript loading stale", acl: "@admin @slow @dangerous",
		doc: commandDoc{"Returns the parameters matching glob patterns.", "2.0.0", "server", "O(N) when N is the number of configuration parameters provided"},
	},
	{
		name: "config|help", arity: 2, fn: cmdConfigHelp,
		flags: "loading stale", acl: "@slow",
		doc: commandDoc{"Lists the CONFIG subcommands.", "5.0.0", "server", "O(1)"},
	},
	{
		name: "config|rewrite", arity: 2, fn: cmdConfigRewrite,
		flags: "admin noscript loading stale", acl: "@admin @slow @dangerous",
		doc: commandDoc{"Fails: there is no configuration file.", "2.8.0", "server", "O(1)"},
	},
	{
		name: "config|resetstat", arity: 2, fn: cmdConfigResetStat,
		flags: "admin noscript loading stale", acl: "@admin @slow @dangerous",
		doc: commandDoc{"Resets the INFO statistics.", "2.0.0", "server", "O(1)"},
	},
	{
		name: "config|set", arity: -4, fn: cmdConfigSet,
		flags: "admin noscript loading stale", acl: "@admin @slow @dangerous", tips: "request_policy:all_nodes response_policy:all_succeeded",
		doc: commandDoc{"Changes parameters at run time.", "2.0.0", "server", "O(N) when N is the number of configuration parameters provided"},
	},
	{
		name: "dbsize", arity: 1, fn: cmdDBSize,
		flags: "readonly fast", acl: "@keyspace @read @fast", tips: "request_policy:all_shards response_policy:agg_sum",
		doc: commandDoc{"Returns the number of keys.", "1.0.0", "server", "O(1)"},
	},
	{
		name: "flushdb", arity: -1, fn: cmdFlush, log: logFlush,
		flags: "write", acl: "@keyspace @write @slow @dangerous", tips: "request_policy:all_shards response_policy:all_succeeded",
		doc: commandDoc{"Deletes every key of the selected database.", "1.0.0", "server",
			"O(N) where N is the number of keys in the selected database"},
	},
	{
		name: "flushall", arity: -1, fn: cmdFlush, log: logFlush,
		flags: "write", acl: "@keyspace @write @slow @dangerous", tips: "request_policy:all_shards response_policy:all_succeeded",
		doc: commandDoc{"Deletes every key of every database.", "1.0.0", "server",
			"O(N) where N is the total number of keys in all databases"},
	},
	{
		name: "bgrewriteaof", arity: 1, fn: cmdBGRewriteAOF,
		flags: "admin noscript no_async_loading", acl: "@admin @slow @dangerous",
		doc: commandDoc{"Rewrites the append-only file in the background, compacted.", "1.0.0", "server", "O(1)"},
	},
	{
		name: "time", arity: 1, fn: cmdTime,
		flags: "loading stale fast", acl: "@fast", tips: "nondeterministic_output",
		doc: commandDoc{"Returns the server time.", "2.6.0", "server", "O(1)"},
	},
	{
		name: "command", arity: -1, fn: cmdCommand,
		flags: "loading stale", acl: "@slow @connection", tips: "nondeterministic_output_order",
		doc: commandDoc{"Describes all commands.", "2.8.13", "server",
			"O(N) where N is the total number of Redis commands"},
	},
	{
		name: "command|help", arity: 2, fn: cmdCommandHelp,
		flags: "loading stale", acl: "@slow @connection",
		doc: commandDoc{"Lists the COMMAND subcommands.", "5.0.0", "server", "O(1)"},
	},
	{
		name: "command|info", arity: -2, fn: cmdCommandInfo,
		flags: "loading stale", acl: "@slow @connection", tips: "nondeterministic_output_order",
		doc: commandDoc{"Describes commands.", "2.8.13", "server", "O(N) where N is the number of commands to look up"},
	},
	{
		name: "command|count", arity: 2, fn: cmdCommandCount,
		flags: "loading stale", acl: "@slow @connection",
		doc: commandDoc{"Returns the number of commands.", "2.8.13", "server", "O(1)"},
	},
	{
		name: "command|list", arity: -2, fn: cmdCommandList,
		flags: "loading stale", acl: "@slow @connection", tips: "nondeterministic_output_order",
		doc: commandDoc{"Lists command names.", "7.0.0", "server",
			"O(N) where N is the total number of Redis commands"},
	},
	{
		name: "command|docs", arity: -2, fn: cmdCommandDocs,
		flags: "loading stale", acl: "@slow @connection", tips: "nondeterministic_output_order",
		doc: commandDoc{"Documents commands.", "7.0.0", "server", "O(N) where N is the number of commands to look up"},
	},
	{
		name: "get", arity: 2, fn: cmdGet,
		flags: "readonly fast", acl: "@read @string @fast",
		firstKey: 1, lastKey: 1, step: 1, keySpecs: []keySpec{{flags: "RO access", index: 1, keyStep: 1}},
		doc: commandDoc{"Returns a key's string value.", "1.0.0", "string", "O(1)"},
	},
	{
		name: "set", arity: -3, fn: cmdSet, log: logSet,
		flags: "write denyoom", acl: "@write @string @slow",
		firstKey: 1, lastKey: 1, step: 1, keySpecs: []keySpec{{notes: "RW and ACCESS due to the optional `GET` argument", flags: "RW access update variable_flags", index: 1, keyStep: 1}},
		doc: commandDoc{"Sets a key's string value, with expiry and conditions.", "1.0.0", "string", "O(1)"},
	},
	{
		name: "setnx", arity: 3, fn: cmdSetNX, log: logSetNX,
		flags: "write denyoom fast", acl: "@write @string @fast",
		firstKey: 1, lastKey: 1, step: 1, keySpecs: []keySpec{{flags: "OW insert", index: 1, keyStep: 1}},
		doc: commandDoc{"Sets a key only if it does not exist.", "1.0.0", "string", "O(1)"},
	},
	{
		name: "setex", arity: 4, fn: cmdSetEX, log: logSetEX,
		flags: "write denyoom", acl: "@write @string @slow",
		firstKey: 1, lastKey: 1, step: 1, keySpecs: []keySpec{{flags: "OW update", index: 1, keyStep: 1}},
		doc: commandDoc{"Sets a key with an expiry in seconds.", "2.0.0", "string", "O(1)"},
	},
	{
		name: "psetex", arity: 4, fn: cmdPSetEX, log: logSetEX,
		flags: "write denyoom", acl: "@write @string @slow",
		firstKey: 1, lastKey: 1, step: 1, keySpecs: []keySpec{{flags: "OW update", index: 1, keyStep: 1}},
		doc: commandDoc{"Sets a key with an expiry in milliseconds.", "2.6.0", "string", "O(1)"},
	},
	{
		name: "getset", arity: 3, fn: cmdGetSet, log: logGetSet,
		flags: "write denyoom fast", acl: "@write @string @fast",
		firstKey: 1, lastKey: 1, step: 1, keySpecs: []keySpec{{flags: "RW access update", index: 1, keyStep: 1}},
		doc: commandDoc{"Sets a key and returns its old value.", "1.0.0", "string", "O(1)"},
	},
	{
		name: "getdel", arity: 2, fn: cmdGetDel, log: logGetDel,
		flags: "write fast", acl: "@write @string @fast",
		firstKey: 1, lastKey: 1, step: 1, keySpecs: []keySpec{{flags: "RW access delete", index: 1, keyStep: 1}},
		doc: commandDoc{"Returns a key's value and deletes it.", "6.2.0", "string", "O(1)"},
	},
	{
		name: "getex", arity: -2, fn: cmdGetEx, log: logGetEx,
		flags: "write fast", acl: "@write @string @fast",
		firstKey: 1, lastKey: 1, step: 1, keySpecs: []keySpec{{notes: "RW and UPDATE because it changes the TTL", flags: "RW access update", index: 1, keyStep: 1}},
		doc: commandDoc{"Returns a key's value and changes its expiry.", "6.2.0", "string", "O(1)"},
	},
	{
		name: "mget", arity: -2, fn: cmdMGet,
		flags: "readonly fast", acl: "@read @string @fast", tips: "request_policy:multi_shard",
		firstKey: 1, lastKey: -1, step: 1, keySpecs: []keySpec{{flags: "RO access", index: 1, lastKey: -1, keyStep: 1}},
		doc: commandDoc{"Returns the values of several keys.", "1.0.0", "string", "O(N) where N is the number of keys to retrieve."},
	},
	{
		name: "mset", arity: -3, fn: cmdMSet, log: logAsIs,
		flags: "write denyoom", acl: "@write @string @slow", tips: "request_policy:multi_shard response_policy:all_succeeded",
		firstKey: 1, lastKey: -1, step: 2, keySpecs: []keySpec{{flags: "OW update", index: 1, lastKey: -1, keyStep: 2}},
		doc: commandDoc{"Sets several keys atomically.", "1.0.1", "string", "O(N) where N is the number of keys to set."},
	},
	{
		name: "msetnx", arity: -3, fn: cmdMSetNX, log: logMSetNX,
		flags: "write denyoom", acl: "@write @string @slow", tips: "request_policy:multi_shard response_policy:agg_min",
		firstKey: 1, lastKey: -1, step: 2, keySpecs: []keySpec{{flags: "OW insert", index: 1, lastKey: -1, keyStep: 2}},
		doc: commandDoc{"Sets several keys only if none exists.", "1.0.1", "string", "O(N) where N is the number of keys to set."},
	},
	{
		name: "incr", arity: 2, fn: cmdIncr, log: logRMW,
		flags: "write denyoom fast", acl: "@write @string @fast",
		firstKey: 1, lastKey: 1, step: 1, keySpecs: []keySpec{{flags: "RW access update", index: 1, keyStep: 1}},
		doc: commandDoc{"Adds one to an integer value.", "1.0.0", "string", "O(1)"},
	},
	{
		name: "incrby", arity: 3, fn: cmdIncrBy, log: logRMW,
		flags: "write denyoom fast", acl: "@write @string @fast",
		firstKey: 1, lastKey: 1, step: 1, keySpecs: []keySpec{{flags: "RW access update", index: 1, keyStep: 1}},
		doc: commandDoc{"Adds to an integer value.", "1.0.0", "string", "O(1)"},
	},
	{
		name: "incrbyfloat", arity: 3, fn: cmdIncrByFloat, log: logIncrFloat,
		flags: "write denyoom fast", acl: "@write @string @fast",
		firstKey: 1, lastKey: 1, step: 1, keySpecs: []keySpec{{flags: "RW access update", index: 1, keyStep: 1}},
		doc: commandDoc{"Adds to a floating point value.", "2.6.0", "string", "O(1)"},
	},
	{
		name: "decr", arity: 2, fn: cmdDecr, log: logRMW,
		flags: "write denyoom fast", acl: "@write @string @fast",
		firstKey: 1, lastKey: 1, step: 1, keySpecs: []keySpec{{flags: "RW access update", index: 1, keyStep: 1}},
		doc: commandDoc{"Subtracts one from an integer value.", "1.0.0", "string", "O(1)"},
	},
	{
		name: "decrby", arity: 3, fn: cmdDecrBy, log: logRMW,
		flags: "write denyoom fast", acl: "@write @string @fast",
		firstKey: 1, lastKey: 1, step: 1, keySpecs: []keySpec{{flags: "RW access update", index: 1, keyStep: 1}},
		doc: commandDoc{"Subtracts from an integer value.", "1.0.0", "string", "O(1)"},
	},
	{
		name: "append", arity: 3, fn: cmdAppend, log: logRMW,
		flags: "write denyoom fast", acl: "@write @string @fast",
		firstKey: 1, lastKey: 1, step: 1, keySpecs: []keySpec{{flags: "RW insert", index: 1, keyStep: 1}},
		doc: commandDoc{"Appends to a string value.", "2.0.0", "string",
			"O(1). The amortized time complexity is O(1) assuming the appended value is small and the already present value is of any size, since the dynamic string library used by Redis will double the free space available on every reallocation."},
	},
	{
		name: "strlen", arity: 2, fn: cmdStrlen,
		flags: "readonly fast", acl: "@read @string @fast",
		firstKey: 1, lastKey: 1, step: 1, keySpecs: []keySpec{{flags: "RO", index: 1, keyStep: 1}},
		doc: commandDoc{"Returns a string value's length.", "2.2.0", "string", "O(1)"},
	},
	{
		name: "getrange", arity: 4, fn: cmdGetRange,
		flags: "readonly", acl: "@read @string @slow",
		firstKey: 1, lastKey: 1, step: 1, keySpecs: []keySpec{{flags: "RO access", index: 1, keyStep: 1}},
		doc: commandDoc{"Returns a substring.", "2.4.0", "string",
			"O(N) where N is the length of the returned string. The complexity is ultimately determined by the returned length, but because creating a substring from an existing string is very cheap, it can be considered O(1) for small strings."},
	},
	{
		name: "setrange", arity: 4, fn: cmdSetRange, log: logRMW,
		flags: "write denyoom", acl: "@write @string @slow",
		firstKey: 1, lastKey: 1, step: 1, keySpecs: []keySpec{{flags: "RW update", index: 1, keyStep: 1}},
		doc: commandDoc{"Overwrites part of a string.", "2.2.0", "string",
			"O(1), not counting the time taken to copy the new string in place. Usually, this string is very small so the amortized complexity is O(1). Otherwise, complexity is O(M) with M being the length of the value argument."},
	},
	{
		name: "del", arity: -2, fn: cmdDel, log: logIfNonZero,
		flags: "write", acl: "@keyspace @write @slow", tips: "request_policy:multi_shard response_policy:agg_sum",
		firstKey: 1, lastKey: -1, step: 1, keySpecs: []keySpec{{flags: "RM delete", index: 1, lastKey: -1, keyStep: 1}},
		doc: commandDoc{"Deletes keys.", "1.0.0", "generic",
			"O(N) where N is the number of keys that will be removed. When a key to remove holds a value other than a string, the individual complexity for this key is O(M) where M is the number of elements in the list, set, sorted set or hash. Removing a single key that holds a string value is O(1)."},
	},
	{
		name: "unlink", arity: -2, fn: cmdDel, log: logIfNonZero,
		flags: "write fast", acl: "@keyspace @write @fast", tips: "request_policy:multi_shard response_policy:agg_sum",
		firstKey: 1, lastKey: -1, step: 1, keySpecs: []keySpec{{flags: "RM delete", index: 1, lastKey: -1, keyStep: 1}},
		doc: commandDoc{"Deletes keys.", "4.0.0", "generic", "O(1) for each key removed."},
	},
	{
		name: "exists", arity: -2, fn: cmdExists,
		flags: "readonly fast", acl: "@keyspace @read @fast", tips: "request_policy:multi_shard response_policy:agg_sum",
		firstKey: 1, lastKey: -1, step: 1, keySpecs: []keySpec{{flags: "RO", index: 1, lastKey: -1, keyStep: 1}},
		doc: commandDoc{"Counts existing keys.", "1.0.0", "generic", "O(N) where N is the number of keys to check."},
	},
	{
		name: "type", arity: 2, fn: cmdType,
		flags: "readonly fast", acl: "@keyspace @read @fast",
		firstKey: 1, lastKey: 1, step: 1, keySpecs: []keySpec{{flags: "RO", index: 1, keyStep: 1}},
		doc: commandDoc{"Returns a key's type.", "1.0.0", "generic", "O(1)"},
	},
	{
		name: "expire", arity: -3, fn: cmdExpire, log: logExpire,
		flags: "write fast", acl: "@keyspace @write @fast",
		firstKey: 1, lastKey: 1, step: 1, keySpecs: []keySpec{{flags: "RW update", index: 1, keyStep: 1}},
		doc: commandDoc{"Sets a key's time to live in seconds.", "1.0.0", "generic", "O(1)"},
	},
	{
		name: "pexpire", arity: -3, fn: cmdPExpire, log: logExpire,
		flags: "write fast", acl: "@keyspace @write @fast",
		firstKey: 1, lastKey: 1, step: 1, keySpecs: []keySpec{{flags: "RW update", index: 1, keyStep: 1}},
		doc: commandDoc{"Sets a key's time to live in milliseconds.", "2.6.0", "generic", "O(1)"},
	},
	{
		name: "expireat", arity: -3, fn: cmdExpireAt, log: logExpire,
		flags: "write fast", acl: "@keyspace @write @fast",
		firstKey: 1, lastKey: 1, step: 1, keySpecs: []keySpec{{flags: "RW update", index: 1, keyStep: 1}},
		doc: commandDoc{"Sets a key's expiry as a unix time in seconds.", "1.2.0", "generic", "O(1)"},
	},
	{
		name: "pexpireat", arity: -3, fn: cmdPExpireAt, log: logExpire,
		flags: "write fast", acl: "@keyspace @write @fast",
		firstKey: 1, lastKey: 1, step: 1, keySpecs: []keySpec{{flags: "RW update", index: 1, keyStep: 1}},
		doc: commandDoc{"Sets a key's expiry as a unix time in milliseconds.", "2.6.0", "generic", "O(1)"},
	},
	{
		name: "expiretime", arity: 2, fn: cmdExpireTime,
		flags: "readonly fast", acl: "@keyspace @read @fast",
		firstKey: 1, lastKey: 1, step: 1, keySpecs: []keySpec{{flags: "RO access", index: 1, keyStep: 1}},
		doc: commandDoc{"Returns a key's expiry as a unix time in seconds.", "7.0.0", "generic", "O(1)"},
	},
	{
		name: "pexpiretime", arity: 2, fn: cmdPExpireTime,
		flags: "readonly fast", acl: "@keyspace @read @fast",
		firstKey: 1, lastKey: 1, step: 1, keySpecs: []keySpec{{flags: "RO access", index: 1, keyStep: 1}},
		doc: commandDoc{"Returns a key's expiry as a unix time in milliseconds.", "7.0.0", "generic", "O(1)"},
	},
	{
		name: "ttl", arity: 2, fn: cmdTTL,
		flags: "readonly fast", acl: "@keyspace @read @fast", tips: "nondeterministic_output",
		firstKey: 1, lastKey: 1, step: 1, keySpecs: []keySpec{{flags: "RO access", index: 1, keyStep: 1}},
		doc: commandDoc{"Returns a key's time to live in seconds.", "1.0.0", "generic", "O(1)"},
	},
	{
		name: "pttl", arity: 2, fn: cmdPTTL,
		flags: "readonly fast", acl: "@keyspace @read @fast", tips: "nondeterministic_output",
		firstKey: 1, lastKey: 1, step: 1, keySpecs: []keySpec{{flags: "RO access", index: 1, keyStep: 1}},
		doc: commandDoc{"Returns a key's time to live in milliseconds.", "2.6.0", "generic", "O(1)"},
	},
	{
		name: "persist", arity: 2, fn: cmdPersist, log: logIfOne,
		flags: "write fast", acl: "@keyspace @write @fast",
		firstKey: 1, lastKey: 1, step: 1, keySpecs: []keySpec{{flags: "RW update", index: 1, keyStep: 1}},
		doc: commandDoc{"Removes a key's expiry.", "2.2.0", "generic", "O(1)"},
	},
	{
		name: "keys", arity: 2, fn: cmdKeys,
		flags: "readonly", acl: "@keyspace @read @slow @dangerous", tips: "request_policy:all_shards nondeterministic_output_order",
		doc: commandDoc{"Returns the keys matching a pattern.", "1.0.0", "generic",
			"O(N) with N being the number of keys in the database, under the assumption that the key names in the database and the given pattern have limited length."},
	},
	{
		name: "scan", arity: -2, fn: cmdScan,
		flags: "readonly", acl: "@keyspace @read @slow", tips: "nondeterministic_output request_policy:special",
		doc: commandDoc{"Iterates over the keys.", "2.8.0", "generic",
			"O(1) for every call. O(N) for a complete iteration, including enough command calls for the cursor to return back to 0. N is the number of elements inside the collection."},
	},
	{
		name: "rename", arity: 3, fn: cmdRename, log: logAsIs,
		flags: "write", acl: "@keyspace @write @slow",
		firstKey: 1, lastKey: 2, step: 1, keySpecs: []keySpec{{flags: "RW access delete", index: 1, keyStep: 1}, {flags: "OW update", index: 2, keyStep: 1}},
		doc: commandDoc{"Renames a key.", "1.0.0", "generic", "O(1)"},
	},
	{
		name: "renamenx", arity: 3, fn: cmdRenameNX, log: logRenameNX,
		flags: "write fast", acl: "@keyspace @write @fast",
		firstKey: 1, lastKey: 2, step: 1, keySpecs: []keySpec{{flags: "RW access delete", index: 1, keyStep: 1}, {flags: "OW insert", index: 2, keyStep: 1}},
		doc: commandDoc{"Renames a key only if the new name does not exist.", "1.0.0", "generic", "O(1)"},
	},
	{
		name: "randomkey", arity: 1, fn: cmdRandomKey,
		flags: "readonly", acl: "@keyspace @read @slow", tips: "request_policy:all_shards nondeterministic_output",
		doc: commandDoc{"Returns a random key.", "1.0.0", "generic", "O(1)"},
	},
	{
		name: "client|setinfo", arity: 4, fn: cmdClientSetInfo,
		flags: "noscript loading stale", acl: "@slow @connection",
		doc: commandDoc{"Records the client library's name or version.", "7.2.0", "connection", "O(1)"},
	},
}

// containerOnly answers a container command sent without a subcommand that
// passed the arity check; CLIENT and CONFIG need one.
func containerOnly(_ *Handler, cl *client, args [][]byte) {
	cl.writeError(errWrongArgs(string(ascii.AppendLower(nil, args[0]))))
}
