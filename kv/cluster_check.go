package kv

import (
	"strconv"

	"github.com/shoalkv/shoal/cluster"
)

// Client flags of cluster mode (client.clusterFlags).
const (
	clusterAsking   = 1 << iota // ASKING: the next command may use an importing slot
	clusterReadOnly             // READONLY: reads of the primary's slots served here
)

// AttachCluster makes h a Redis Cluster node of c (cluster-enabled): every
// keyed command is checked against c's slot map, the CLUSTER command
// serves, INFO says cluster_enabled:1. Call it before serving.
func (h *Handler) AttachCluster(c *cluster.State) {
	h.cluster = c
	c.SetData(h)
}

// Redirection errors, as Redis words them.
const (
	errCrossSlot      = "CROSSSLOT Keys in request don't hash to the same slot"
	errTryAgain       = "TRYAGAIN Multiple keys request during rehashing of slot"
	errClusterDown    = "CLUSTERDOWN The cluster is down"
	errClusterDownRO  = "CLUSTERDOWN The cluster is down and only accepts read commands"
	errClusterUnbound = "CLUSTERDOWN Hash slot not served"
)

// clusterRefuses is Redis's cluster redirection of processCommand and
// getNodeByQuery: a command whose keys are not all in one slot, or in a
// slot this node does not serve, is answered with CROSSSLOT, MOVED, ASK,
// TRYAGAIN or CLUSTERDOWN instead of running. EXEC checks every queued
// command's keys together. It reports whether it answered.
func (h *Handler) clusterRefuses(cl *client, cmd *command, args [][]byte, counters *commandCounters) bool {
	asking := cl.clusterFlags&clusterAsking != 0
	s := cl.sess.Load()
	inMulti := s != nil && s.multi
	if asking && cmd.name != "asking" && (!inMulti || cmd.name == "exec") {
		cl.clusterFlags &^= clusterAsking
	}
	if cl.conn == nil || cl.isPrimaryLink() {
		return false // a primary's stream or the AOF: obeyed
	}
	isExec := cmd.name == "exec"
	if len(cmd.keySpecs) == 0 && !cmd.movableKeys && !isExec {
		return false
	}
	if isExec && !inMulti {
		return false
	}
	q := slotQuery{routes: h.cluster.Routes(), h: h}
	write := cmd.logged
	if isExec {
		for _, qc := range s.queue {
			c := lookupCommand(qc.args)
			if c == nil {
				continue
			}
			write = write || c.logged
			if !q.add(c, qc.args) {
				break
			}
		}
	} else {
		q.add(cmd, args)
	}
	msg := q.verdict(cl, cmd, write, asking)
	if msg == "" {
		return false
	}
	counters.rejected.Add(1)
	if isExec {
		h.endTransaction(s)
	} else {
		cl.flagRejected()
	}
	cl.writeError(msg)
	return true
}

// lookupCommand finds the command (or subcommand) args name, nil if none.
func lookupCommand(args [][]byte) *command {
	c := dispatchIdx.find(args[0])
	if c != nil && c.subs != nil && len(args) >= 2 {
		c = lookupName(c.subs, args[1])
	}
	return c
}

// slotQuery gathers the keys of a command (or of EXEC's queue) and the
// one slot they must share.
type slotQuery struct {
	routes    *cluster.Routes
	h         *Handler
	first     []byte
	slot      int
	owner     *cluster.Peer
	multiKeys bool
	crossSlot bool
	unbound   bool
	open      bool // the slot is migrating from or importing to this node
	missing   int  // keys of an open slot this node lacks
	existing  int
}

// add takes cmd's keys; false once the answer is known (an unbound or
// cross slot).
func (q *slotQuery) add(cmd *command, args [][]byte) bool {
	if cmd.keysOf != nil {
		var buf [8]int
		for _, p := range cmd.keysOf(buf[:0], args) {
			if !q.key(args[p]) {
				return false
			}
		}
		return true
	}
	for i := range cmd.keySpecs {
		first, last, step := cmd.keySpecs[i].span(args)
		for p := first; p <= last; p += step {
			if !q.key(args[p]) {
				return false
			}
		}
	}
	return true
}

func (q *slotQuery) key(k []byte) bool {
	slot := cluster.KeySlot(k)
	if q.first == nil {
		q.first, q.slot = k, slot
		q.owner = q.routes.Owner[slot]
		if q.owner == nil {
			q.unbound = true
			return false
		}
		r := q.routes
		q.open = (q.owner == r.Myself && r.Migrating[slot] != nil) || r.Importing[slot] != nil
	} else if string(k) != string(q.first) {
		if slot != q.slot {
			q.crossSlot = true
			return false
		}
		q.multiKeys = true
	}
	if q.open {
		if q.h.db(0).Exists([][]byte{k}) > 0 {
			q.existing++
		} else {
			q.missing++
		}
	}
	return true
}

// verdict is the error that answers the command instead, "" to run it.
func (q *slotQuery) verdict(cl *client, cmd *command, write, asking bool) string {
	r := q.routes
	switch {
	case q.crossSlot:
		return errCrossSlot
	case q.unbound:
		return errClusterUnbound
	case q.first == nil:
		return ""
	}
	// Sharded pub/sub is served while the cluster is down (Redis's
	// cluster-allow-pubsubshard-when-down, yes by default) and on a
	// replica of the slot's primary without READONLY, as Redis's
	// getNodeByQuery does.
	shardPubsub := cmd.name == "ssubscribe" || cmd.name == "sunsubscribe" || cmd.name == "spublish"
	if !r.OK && !shardPubsub {
		switch {
		case !r.AllowReadsWhenDown:
			return errClusterDown
		case write:
			return errClusterDownRO
		}
	}
	if q.open && cmd.name == "migrate" {
		return ""
	}
	if r.Migrating[q.slot] != nil && q.owner == r.Myself && q.missing > 0 && !shardPubsub {
		if q.existing > 0 {
			return errTryAgain
		}
		return "ASK " + strconv.Itoa(q.slot) + " " + r.Migrating[q.slot].Addr
	}
	if r.Importing[q.slot] != nil && (asking || hasWord(cmd.flags, "asking")) && !shardPubsub {
		if q.multiKeys && q.missing > 0 {
			return errTryAgain
		}
		return ""
	}
	if (cl.clusterFlags&clusterReadOnly != 0 || shardPubsub) && !write && r.MyPrimary != nil && r.MyPrimary == q.owner {
		return ""
	}
	if q.owner != r.Myself {
		return "MOVED " + strconv.Itoa(q.slot) + " " + q.owner.Addr
	}
	return ""
}
