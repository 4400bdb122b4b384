package kv

import (
	"strconv"

	"github.com/shoalkv/shoal/cluster"
	"github.com/shoalkv/shoal/internal/ascii"
)

// The CLUSTER command and READONLY/READWRITE (ASKING is in migrate.go),
// as redis-server 7.0 answers them; every one refuses with
// errClusterDisabled outside cluster mode. The node's state lives in
// package cluster; these write its answers.
var _ = registerFamily(family{commands: []*command{
	{
		name: "cluster", arity: -2, fn: containerOnly,
		acl: "@slow",
		doc: commandDoc{"Redis Cluster commands.", "3.0.0", "cluster", "Depends on subcommand."},
	},
	clusterSub("addslots", -3, true, cmdClusterAddSlots, "", "Assigns slots to this node.", "3.0.0", "O(N) where N is the total number of hash slot arguments"),
	clusterSub("addslotsrange", -4, true, cmdClusterAddSlots, "", "Assigns ranges of slots to this node.", "7.0.0", "O(N) where N is the total number of the slots between the start slot and end slot arguments."),
	clusterSub("bumpepoch", 2, true, cmdClusterBumpEpoch, "nondeterministic_output", "Gives this node a new config epoch unless it has the greatest.", "3.0.0", "O(1)"),
	clusterSub("count-failure-reports", 3, false, cmdClusterCountFailureReports, "nondeterministic_output", "Counts the failure reports about a node.", "3.0.0", "O(N) where N is the number of failure reports"),
	clusterSub("countkeysinslot", 3, false, cmdClusterCountKeysInSlot, "", "Counts the keys of a slot.", "3.0.0", "O(1)"),
	clusterSub("delslots", -3, true, cmdClusterAddSlots, "", "Unassigns slots.", "3.0.0", "O(N) where N is the total number of hash slot arguments"),
	clusterSub("delslotsrange", -4, true, cmdClusterAddSlots, "", "Unassigns ranges of slots.", "7.0.0", "O(N) where N is the total number of the slots between the start slot and end slot arguments."),
	clusterSub("flushslots", 2, true, cmdClusterFlushSlots, "", "Unassigns every slot of this node.", "3.0.0", "O(1)"),
	clusterSub("forget", 3, true, cmdClusterForget, "", "Removes a node from this node's table for a minute.", "3.0.0", "O(1)"),
	clusterSub("getkeysinslot", 4, false, cmdClusterGetKeysInSlot, "nondeterministic_output", "Returns keys of a slot.", "3.0.0", "O(log(N)) where N is the number of requested keys"),
	{
		name: "cluster|help", arity: 2, fn: cmdClusterHelp,
		flags: "loading stale", acl: "@slow",
		doc: commandDoc{"Lists the CLUSTER subcommands.", "5.0.0", "cluster", "O(1)"},
	},
	clusterSub("info", 2, false, cmdClusterInfo, "nondeterministic_output", "Describes the cluster's state.", "3.0.0", "O(1)"),
	clusterSub("keyslot", 3, false, cmdClusterKeySlot, "", "Returns the hash slot of a key.", "3.0.0", "O(N) where N is the number of bytes in the key"),
	clusterSub("links", 2, false, cmdClusterLinks, "nondeterministic_output", "Lists the cluster bus links of this node.", "7.0.0", "O(N) where N is the total number of Cluster nodes"),
	clusterSub("meet", -4, true, cmdClusterMeet, "", "Starts a handshake with another node.", "3.0.0", "O(1)"),
	clusterSub("myid", 2, false, cmdClusterMyID, "", "Returns this node's ID.", "3.0.0", "O(1)"),
	clusterSub("nodes", 2, false, cmdClusterNodes, "nondeterministic_output", "Describes every node this node knows.", "3.0.0", "O(N) where N is the total number of Cluster nodes"),
	clusterSub("replicas", 3, false, cmdClusterReplicas, "nondeterministic_output", "Lists the replicas of a primary.", "5.0.0", "O(1)"),
	clusterSub("replicate", 3, true, cmdClusterReplicate, "", "Makes this node a replica of a primary.", "3.0.0", "O(1)"),
	clusterSub("reset", -2, false, cmdClusterReset, "", "Forgets every other node and this node's slots.", "3.0.0", "O(N) where N is the number of known nodes. The command may execute a FLUSHALL as a side effect."),
	clusterSub("saveconfig", 2, true, cmdClusterSaveConfig, "", "Writes nodes.conf now.", "3.0.0", "O(1)"),
	clusterSub("set-config-epoch", 3, true, cmdClusterSetConfigEpoch, "", "Sets the config epoch of a new node.", "3.0.0", "O(1)"),
	clusterSub("setslot", -4, true, cmdClusterSetSlot, "", "Opens, closes or assigns a slot.", "3.0.0", "O(1)"),
	clusterSub("shards", 2, false, cmdClusterShards, "nondeterministic_output", "Describes the shards: slot ranges and their nodes.", "7.0.0", "O(N) where N is the total number of cluster nodes"),
	clusterSub("slaves", 3, false, cmdClusterReplicas, "nondeterministic_output", "Lists the replicas of a primary (an old name of REPLICAS).", "3.0.0", "O(1)"),
	clusterSub("slots", 2, false, cmdClusterSlots, "nondeterministic_output", "Describes the slot ranges and their nodes.", "3.0.0", "O(N) where N is the total number of Cluster nodes"),
	{
		name: "readonly", arity: 1, fn: cmdReadOnly,
		flags: "loading stale fast", acl: "@fast @connection",
		doc: commandDoc{"Lets this connection read a replica's slots.", "3.0.0", "cluster", "O(1)"},
	},
	{
		name: "readwrite", arity: 1, fn: cmdReadWrite,
		flags: "loading stale fast", acl: "@fast @connection",
		doc: commandDoc{"Ends READONLY.", "3.0.0", "cluster", "O(1)"},
	},
}})

// clusterSub makes the entry of a CLUSTER subcommand: the administrative
// ones have Redis's admin flags and ACL categories. The few outliers
// (RESET's noscript, the admin reads) are set after.
func clusterSub(name string, arity int, admin bool, fn handlerFunc, tips, summary, since, complexity string) *command {
	c := &command{
		name: "cluster|" + name, arity: arity, fn: fn, tips: tips,
		flags: "stale", acl: "@slow",
		doc: commandDoc{summary, since, "cluster", complexity},
	}
	if admin {
		c.flags, c.acl = "admin stale no_async_loading", "@admin @slow @dangerous"
	}
	switch name {
	case "reset":
		c.flags, c.acl = "admin noscript stale", "@admin @slow @dangerous"
	case "count-failure-reports", "replicas", "slaves":
		c.flags, c.acl = "admin stale", "@admin @slow @dangerous"
	}
	return c
}

// clusterOn answers errClusterDisabled outside cluster mode.
func (h *Handler) clusterOn(cl *client) bool {
	if h.cluster == nil {
		cl.writeError(errClusterDisabled)
		return false
	}
	return true
}

func cmdReadOnly(h *Handler, cl *client, _ [][]byte) {
	if h.clusterOn(cl) {
		cl.clusterFlags |= clusterReadOnly
		cl.writeOK()
	}
}

func cmdReadWrite(h *Handler, cl *client, _ [][]byte) {
	if h.clusterOn(cl) {
		cl.clusterFlags &^= clusterReadOnly
		cl.writeOK()
	}
}

func cmdAsking(h *Handler, cl *client, _ [][]byte) {
	if h.clusterOn(cl) {
		cl.clusterFlags |= clusterAsking
		cl.writeOK()
	}
}

// parseSlot reads a slot argument as Redis's getSlotOrReply.
func parseSlot(b []byte) (int, bool) {
	n, ok := ascii.ParseInt(b)
	if !ok || n < 0 || n >= cluster.Slots {
		return 0, false
	}
	return int(n), true
}

func cmdClusterAddSlots(h *Handler, cl *client, args [][]byte) {
	if !h.clusterOn(cl) {
		return
	}
	sub := string(ascii.AppendLower(nil, args[1]))
	del := sub == "delslots" || sub == "delslotsrange"
	ranged := sub == "addslotsrange" || sub == "delslotsrange"
	var ranges []int
	if ranged {
		if len(args)%2 == 1 {
			cl.writeError(errWrongArgs("cluster|" + sub))
			return
		}
		for j := 2; j < len(args); j += 2 {
			lo, ok1 := parseSlot(args[j])
			if !ok1 {
				cl.writeError("ERR Invalid or out of range slot")
				return
			}
			hi, ok2 := parseSlot(args[j+1])
			if !ok2 {
				cl.writeError("ERR Invalid or out of range slot")
				return
			}
			if lo > hi {
				cl.writeError("ERR start slot number " + strconv.Itoa(lo) + " is greater than end slot number " + strconv.Itoa(hi))
				return
			}
			ranges = append(ranges, lo, hi)
		}
	} else {
		for _, a := range args[2:] {
			slot, ok := parseSlot(a)
			if !ok {
				cl.writeError("ERR Invalid or out of range slot")
				return
			}
			ranges = append(ranges, slot, slot)
		}
	}
	if err := h.cluster.ChangeSlots(ranges, del); err != nil {
		cl.writeError("ERR " + err.Error())
		return
	}
	cl.writeOK()
}

func cmdClusterBumpEpoch(h *Handler, cl *client, _ [][]byte) {
	if h.clusterOn(cl) {
		cl.writeStatus(h.cluster.BumpEpoch())
	}
}

func cmdClusterCountFailureReports(h *Handler, cl *client, args [][]byte) {
	if !h.clusterOn(cl) {
		return
	}
	n, err := h.cluster.CountFailureReports(string(args[2]))
	if err != nil {
		cl.writeError(sanitizeError("ERR " + err.Error()))
		return
	}
	cl.writeInt(int64(n))
}

func cmdClusterCountKeysInSlot(h *Handler, cl *client, args [][]byte) {
	if !h.clusterOn(cl) {
		return
	}
	slot, ok := ascii.ParseInt(args[2])
	if !ok {
		cl.writeError(errNotInteger)
		return
	}
	if slot < 0 || slot >= cluster.Slots {
		cl.writeError("ERR Invalid slot")
		return
	}
	cl.writeInt(int64(h.KeysInSlot(int(slot))))
}

func cmdClusterGetKeysInSlot(h *Handler, cl *client, args [][]byte) {
	if !h.clusterOn(cl) {
		return
	}
	slot, ok1 := ascii.ParseInt(args[2])
	if !ok1 {
		cl.writeError(errNotInteger)
		return
	}
	count, ok2 := ascii.ParseInt(args[3])
	if !ok2 {
		cl.writeError(errNotInteger)
		return
	}
	if slot < 0 || slot >= cluster.Slots || count < 0 {
		cl.writeError("ERR Invalid slot or number of keys")
		return
	}
	keys := h.keysInSlot(int(slot), int(min(count, 1<<31)))
	cl.writeArray(len(keys))
	for _, k := range keys {
		cl.writeBulk(k)
	}
}

func cmdClusterFlushSlots(h *Handler, cl *client, _ [][]byte) {
	if !h.clusterOn(cl) {
		return
	}
	if h.db(0).DBSize() != 0 {
		cl.writeError("ERR DB must be empty to perform CLUSTER FLUSHSLOTS.")
		return
	}
	h.cluster.FlushSlots()
	cl.writeOK()
}

func cmdClusterForget(h *Handler, cl *client, args [][]byte) {
	if !h.clusterOn(cl) {
		return
	}
	if err := h.cluster.Forget(string(args[2])); err != nil {
		cl.writeError(sanitizeError("ERR " + err.Error()))
		return
	}
	cl.writeOK()
}

func cmdClusterHelp(h *Handler, cl *client, _ [][]byte) {
	if !h.clusterOn(cl) {
		return
	}
	writeHelp(cl, "CLUSTER", clusterHelp)
}

func cmdClusterInfo(h *Handler, cl *client, _ [][]byte) {
	if h.clusterOn(cl) {
		cl.writeVerbatim([]byte(h.cluster.Info()))
	}
}

func cmdClusterKeySlot(h *Handler, cl *client, args [][]byte) {
	if h.clusterOn(cl) {
		cl.writeInt(int64(cluster.KeySlot(args[2])))
	}
}

func cmdClusterLinks(h *Handler, cl *client, _ [][]byte) {
	if !h.clusterOn(cl) {
		return
	}
	links := h.cluster.Links()
	cl.writeArray(len(links))
	for _, l := range links {
		cl.writeMap(6)
		cl.writeBulkStr("direction")
		cl.writeBulkStr(l.Direction)
		cl.writeBulkStr("node")
		cl.writeBulkStr(l.Node)
		cl.writeBulkStr("create-time")
		cl.writeInt(l.CreateTime)
		cl.writeBulkStr("events")
		cl.writeBulkStr(l.Events)
		cl.writeBulkStr("send-buffer-allocated")
		cl.writeInt(0)
		cl.writeBulkStr("send-buffer-used")
		cl.writeInt(0)
	}
}

func cmdClusterMeet(h *Handler, cl *client, args [][]byte) {
	if !h.clusterOn(cl) {
		return
	}
	if len(args) > 5 {
		cl.writeError(unknownSubcommandSyntax(args[1]))
		return
	}
	port, ok := ascii.ParseInt(args[3])
	if !ok {
		cl.writeError(sanitizeError("ERR Invalid TCP base port specified: " + string(args[3])))
		return
	}
	cport := port + 10000
	if len(args) == 5 {
		if cport, ok = ascii.ParseInt(args[4]); !ok {
			cl.writeError(sanitizeError("ERR Invalid TCP bus port specified: " + string(args[4])))
			return
		}
	}
	if port > 65535 || cport > 65535 || port < 0 || cport < 0 {
		cl.writeError(sanitizeError("ERR Invalid node address specified: " + string(args[2]) + ":" + string(args[3])))
		return
	}
	if err := h.cluster.Meet(string(args[2]), int(port), int(cport)); err != nil {
		cl.writeError(sanitizeError("ERR " + err.Error()))
		return
	}
	cl.writeOK()
}

// unknownSubcommandSyntax is Redis's addReplySubcommandSyntaxError.
func unknownSubcommandSyntax(sub []byte) string {
	return sanitizeError("ERR unknown subcommand or wrong number of arguments for '" + cString(sub, 128) + "'. Try CLUSTER HELP.")
}

func cmdClusterMyID(h *Handler, cl *client, _ [][]byte) {
	if h.clusterOn(cl) {
		cl.writeBulkStr(h.cluster.MyID())
	}
}

func cmdClusterNodes(h *Handler, cl *client, _ [][]byte) {
	if h.clusterOn(cl) {
		cl.writeVerbatim([]byte(h.cluster.Nodes()))
	}
}

func cmdClusterReplicas(h *Handler, cl *client, args [][]byte) {
	if !h.clusterOn(cl) {
		return
	}
	lines, err := h.cluster.Replicas(string(args[2]))
	if err != nil {
		cl.writeError(sanitizeError("ERR " + err.Error()))
		return
	}
	cl.writeArray(len(lines))
	for _, l := range lines {
		cl.writeBulkStr(l)
	}
}

func cmdClusterReplicate(h *Handler, cl *client, args [][]byte) {
	if !h.clusterOn(cl) {
		return
	}
	ip, port, err := h.cluster.Replicate(string(args[2]), h.db(0).DBSize() != 0)
	if err != nil {
		cl.writeError(sanitizeError("ERR " + err.Error()))
		return
	}
	h.switchMaster(cl, ip, port)
	h.opts.Logger.Info("CLUSTER REPLICATE: replicating", "primary", ip+":"+strconv.Itoa(port))
	cl.writeOK()
}

func cmdClusterReset(h *Handler, cl *client, args [][]byte) {
	if !h.clusterOn(cl) {
		return
	}
	if len(args) > 3 {
		cl.writeError(unknownSubcommandSyntax(args[1]))
		return
	}
	hard := false
	if len(args) == 3 {
		switch {
		case ascii.EqualFold(args[2], "hard"):
			hard = true
		case ascii.EqualFold(args[2], "soft"):
		default:
			cl.writeError(errSyntax)
			return
		}
	}
	replica := h.cluster.IsReplica()
	if !replica && h.db(int(cl.selected.Load())).DBSize() != 0 {
		cl.writeError("ERR CLUSTER RESET can't be called with master nodes containing keys")
		return
	}
	if replica {
		h.switchMaster(cl, "", 0)
	}
	h.cluster.Reset(hard)
	cl.writeOK()
}

func cmdClusterSaveConfig(h *Handler, cl *client, _ [][]byte) {
	if !h.clusterOn(cl) {
		return
	}
	if err := h.cluster.SaveConfig(); err != nil {
		cl.writeError(sanitizeError("ERR " + err.Error()))
		return
	}
	cl.writeOK()
}

func cmdClusterSetConfigEpoch(h *Handler, cl *client, args [][]byte) {
	if !h.clusterOn(cl) {
		return
	}
	epoch, ok := ascii.ParseInt(args[2])
	if !ok {
		cl.writeError(errNotInteger)
		return
	}
	if err := h.cluster.SetConfigEpoch(epoch); err != nil {
		cl.writeError("ERR " + err.Error())
		return
	}
	cl.writeOK()
}

func cmdClusterSetSlot(h *Handler, cl *client, args [][]byte) {
	if !h.clusterOn(cl) {
		return
	}
	if h.cluster.IsReplica() {
		cl.writeError("ERR Please use SETSLOT only with masters.")
		return
	}
	slot, ok := parseSlot(args[2])
	if !ok {
		cl.writeError("ERR Invalid or out of range slot")
		return
	}
	action := string(ascii.AppendLower(nil, args[3]))
	var id string
	switch {
	case (action == "migrating" || action == "importing" || action == "node") && len(args) == 5:
		id = string(args[4])
	case action == "stable" && len(args) == 4:
	default:
		cl.writeError("ERR Invalid CLUSTER SETSLOT action or number of arguments. Try CLUSTER HELP")
		return
	}
	if err := h.cluster.SetSlot(slot, action, id); err != nil {
		cl.writeError(sanitizeError("ERR " + err.Error()))
		return
	}
	cl.writeOK()
}

func (cl *client) writeNodeInfo(n cluster.NodeInfo) {
	extra := 0
	if n.Hostname != "" {
		extra = 1
	}
	cl.writeArray(4)
	cl.writeBulkStr(n.IP)
	cl.writeInt(int64(n.Port))
	cl.writeBulkStr(n.ID)
	cl.writeMap(extra)
	if extra == 1 {
		cl.writeBulkStr("hostname")
		cl.writeBulkStr(n.Hostname)
	}
}

func cmdClusterSlots(h *Handler, cl *client, _ [][]byte) {
	if !h.clusterOn(cl) {
		return
	}
	ranges := h.cluster.SlotRanges()
	cl.writeArray(len(ranges))
	for _, r := range ranges {
		cl.writeArray(2 + len(r.Nodes))
		cl.writeInt(int64(r.Start))
		cl.writeInt(int64(r.End))
		for _, n := range r.Nodes {
			cl.writeNodeInfo(n)
		}
	}
}

func cmdClusterShards(h *Handler, cl *client, _ [][]byte) {
	if !h.clusterOn(cl) {
		return
	}
	shards := h.cluster.Shards()
	cl.writeArray(len(shards))
	for _, sh := range shards {
		cl.writeMap(2)
		cl.writeBulkStr("slots")
		cl.writeArray(len(sh.Slots))
		for _, s := range sh.Slots {
			cl.writeInt(int64(s))
		}
		cl.writeBulkStr("nodes")
		cl.writeArray(len(sh.Nodes))
		for _, n := range sh.Nodes {
			fields := 7
			if n.Hostname != "" {
				fields++
			}
			cl.writeMap(fields)
			cl.writeBulkStr("id")
			cl.writeBulkStr(n.ID)
			cl.writeBulkStr("port")
			cl.writeInt(int64(n.Port))
			cl.writeBulkStr("ip")
			cl.writeBulkStr(n.IP)
			cl.writeBulkStr("endpoint")
			cl.writeBulkStr(n.IP)
			if n.Hostname != "" {
				cl.writeBulkStr("hostname")
				cl.writeBulkStr(n.Hostname)
			}
			role, health := "master", "online"
			if n.Replica {
				role = "replica"
			}
			switch {
			case n.Failed:
				health = "fail"
			case n.Replica && n.Offset == 0:
				health = "loading"
			}
			cl.writeBulkStr("role")
			cl.writeBulkStr(role)
			cl.writeBulkStr("replication-offset")
			cl.writeInt(int64(n.Offset))
			cl.writeBulkStr("health")
			cl.writeBulkStr(health)
		}
	}
}

var clusterHelp = []string{
	"ADDSLOTS <slot> [<slot> ...]",
	"    Assign slots to current node.",
	"ADDSLOTSRANGE <start slot> <end slot> [<start slot> <end slot> ...]",
	"    Assign slots which are between <start-slot> and <end-slot> to current node.",
	"BUMPEPOCH",
	"    Advance the cluster config epoch.",
	"COUNT-FAILURE-REPORTS <node-id>",
	"    Return number of failure reports for <node-id>.",
	"COUNTKEYSINSLOT <slot>",
	"    Return the number of keys in <slot>.",
	"DELSLOTS <slot> [<slot> ...]",
	"    Delete slots information from current node.",
	"DELSLOTSRANGE <start slot> <end slot> [<start slot> <end slot> ...]",
	"    Delete slots information which are between <start-slot> and <end-slot> from current node.",
	"FAILOVER [FORCE|TAKEOVER]",
	"    Promote current replica node to being a master.",
	"FORGET <node-id>",
	"    Remove a node from the cluster.",
	"GETKEYSINSLOT <slot> <count>",
	"    Return key names stored by current node in a slot.",
	"FLUSHSLOTS",
	"    Delete current node own slots information.",
	"INFO",
	"    Return information about the cluster.",
	"KEYSLOT <key>",
	"    Return the hash slot for <key>.",
	"MEET <ip> <port> [<bus-port>]",
	"    Connect nodes into a working cluster.",
	"MYID",
	"    Return the node id.",
	"NODES",
	"    Return cluster configuration seen by node. Output format:",
	"    <id> <ip:port> <flags> <master> <pings> <pongs> <epoch> <link> <slot> ...",
	"REPLICATE <node-id>",
	"    Configure current node as replica to <node-id>.",
	"RESET [HARD|SOFT]",
	"    Reset current node (default: soft).",
	"SET-CONFIG-EPOCH <epoch>",
	"    Set config epoch of current node.",
	"SETSLOT <slot> (IMPORTING <node-id>|MIGRATING <node-id>|STABLE|NODE <node-id>)",
	"    Set slot state.",
	"REPLICAS <node-id>",
	"    Return <node-id> replicas.",
	"SAVECONFIG",
	"    Force saving cluster configuration on disk.",
	"SLOTS",
	"    Return information about slots range mappings. Each range is made of:",
	"    start, end, master and replicas IP addresses, ports and ids",
	"SHARDS",
	"    Return information about slot range mappings and the nodes associated with them.",
	"LINKS",
	"    Return information about all network links between this node and its peers.",
	"    Output format is an array where each array element is a map containing attributes of a link",
}
