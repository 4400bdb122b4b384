package kv

import (
	"strconv"
	"time"
)

// ROLE and INFO replication, with Redis's field names and formats: Sentinel
// and client libraries parse them.

// linkStateWord is a link state as ROLE names it.
func linkStateWord(st int32) string {
	switch st {
	case linkConnect:
		return "connect"
	case linkConnecting:
		return "connecting"
	case linkHandshake:
		return "handshake"
	case linkTransfer:
		return "sync"
	case linkConnected:
		return "connected"
	}
	return "none"
}

func cmdRole(h *Handler, cl *client, _ [][]byte) {
	r := &h.repl
	host, port := h.masterAddr()
	if host == "" {
		cl.writeArray(3)
		cl.writeBulkStr("master")
		h.writeRoleReplicas(cl) // primary_info.go
		return
	}
	st := r.state.Load()
	offset := int64(-1)
	if st == linkConnected {
		offset = r.offset.Load()
	}
	cl.writeArray(5)
	cl.writeBulkStr("slave")
	cl.writeBulkStr(host)
	cl.writeInt(int64(port))
	cl.writeBulkStr(linkStateWord(st))
	cl.writeInt(offset)
}

// replicationInfo reports INFO's replication section, field by field.
func (h *Handler) replicationInfo(field func(k string, v any)) {
	r := &h.repl
	host, port := h.masterAddr()
	if host == "" {
		field("role", "master")
	} else {
		st := r.state.Load()
		up := st == linkConnected
		field("role", "slave")
		field("master_host", host)
		field("master_port", port)
		field("master_link_status", map[bool]string{true: "up", false: "down"}[up])
		lastIO := int64(-1)
		if up {
			lastIO = int64(time.Since(time.UnixMilli(r.lastIO.Load())) / time.Second)
		}
		field("master_last_io_seconds_ago", lastIO)
		field("master_sync_in_progress", boolInt(st == linkTransfer))
		field("slave_read_repl_offset", r.readOffset.Load())
		field("slave_repl_offset", r.offset.Load())
		if st == linkTransfer {
			total, read := r.syncTotal.Load(), r.syncRead.Load()
			perc := 0.0
			if total > 0 {
				perc = float64(read) / float64(total) * 100
			}
			field("master_sync_total_bytes", total)
			field("master_sync_read_bytes", read)
			field("master_sync_left_bytes", total-read)
			field("master_sync_perc", strconv.FormatFloat(perc, 'f', 2, 64))
			field("master_sync_last_io_seconds_ago", int64(time.Since(time.UnixMilli(r.lastIO.Load()))/time.Second))
		}
		if !up {
			down := int64(-1)
			if since := r.downSince.Load(); since != 0 {
				down = time.Now().Unix() - since
			}
			field("master_link_down_since_seconds", down)
		}
		field("slave_priority", h.params.Get("replica-priority"))
		field("slave_read_only", boolInt(r.readOnly.Load()))
		field("replica_announced", boolInt(h.params.Bool("replica-announced")))
	}
	id, id2, second := h.replIDs()
	h.replicaStates(field) // primary_info.go
	field("master_failover_state", h.failoverStateWord())
	field("master_replid", id)
	field("master_replid2", id2)
	field("master_repl_offset", r.offset.Load())
	field("second_repl_offset", second)
	h.backlogInfo(field) // primary_info.go
}
