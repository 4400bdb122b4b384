package kv

import (
	"time"

	"github.com/shoalkv/shoal/cluster"
	"github.com/shoalkv/shoal/internal/ascii"
)

// What a cluster's failovers ask of the replication (cluster.Data): the
// link's age for the election's validity check, a promotion when this
// replica won an election or took over, a new primary when this node
// lost its slots, and the hold of writes of a manual failover. Each uses
// the replication's own entry points (unsetMaster, setMaster,
// holdWrites) with the world stopped, as REPLICAOF does, so that the
// history switches between two whole commands. The cluster calls them
// from a goroutine of its own, never from a loop.

var _ = registerFamily(family{commands: []*command{
	clusterSub("failover", -2, true, cmdClusterFailover, "", "Makes this replica take over its primary's slots.", "3.0.0", "O(1)"),
}})

// ReplicaLink implements cluster.Data.
func (h *Handler) ReplicaLink() cluster.ReplicaLink {
	r := &h.repl
	host, _ := h.masterAddr()
	link := cluster.ReplicaLink{
		Following:  host != "",
		PingPeriod: h.params.Int("repl-ping-replica-period") * 1000,
	}
	now := time.Now().UnixMilli()
	switch {
	case r.state.Load() == linkConnected:
		link.DataAge = now - r.lastIO.Load()
	case r.downSince.Load() != 0:
		link.DataAge = now - r.downSince.Load()*1000
	default:
		link.DataAge = now // never connected: as Redis's repl_down_since 0
	}
	return link
}

// Promote implements cluster.Data: REPLICAOF NO ONE.
func (h *Handler) Promote() {
	stopped := h.stopWorld(nil)
	promoted := h.unsetMaster()
	h.resumeWorld(nil, stopped)
	if promoted {
		h.opts.Logger.Info("MASTER MODE enabled (cluster failover)")
	}
}

// Follow implements cluster.Data: REPLICAOF ip port.
func (h *Handler) Follow(ip string, port int) {
	stopped := h.stopWorld(nil)
	h.setMaster(ip, port)
	h.resumeWorld(nil, stopped)
	h.opts.Logger.Info("cluster: replicating", "primary", ip, "port", port)
}

// HoldWrites implements cluster.Data with FAILOVER's hold: once the world
// stopped and resumed, no write that began before the hold still runs.
func (h *Handler) HoldWrites(on bool) {
	h.holdWrites(on)
	if on {
		h.resumeWorld(nil, h.stopWorld(nil))
	}
}

// clusterHoldsWrites reports whether this cluster primary holds its writes
// for a replica's manual failover.
func (h *Handler) clusterHoldsWrites() bool { return h.cluster != nil && h.cluster.WritesHeld() }

func cmdClusterFailover(h *Handler, cl *client, args [][]byte) {
	if !h.clusterOn(cl) {
		return
	}
	if len(args) > 3 {
		cl.writeError(unknownSubcommandSyntax(args[1]))
		return
	}
	mode := cluster.FailoverDefault
	if len(args) == 3 {
		switch {
		case ascii.EqualFold(args[2], "force"):
			mode = cluster.FailoverForce
		case ascii.EqualFold(args[2], "takeover"):
			mode = cluster.FailoverTakeover
		default:
			cl.writeError(errSyntax)
			return
		}
	}
	takeover, err := h.cluster.Failover(mode)
	if err != nil {
		cl.writeError(sanitizeError("ERR " + err.Error()))
		return
	}
	if takeover {
		h.switchMaster(cl, "", 0)
		h.cluster.TakeOver()
	}
	cl.writeOK()
}
