package cluster

import (
	"fmt"
	"net/netip"
	"slices"
	"strconv"
	"strings"
)

// The methods below serve the CLUSTER subcommands of package kv. An
// error's text is Redis's reply without the "ERR " prefix.

func (s *State) sortedNodes() []*node {
	ns := make([]*node, 0, len(s.nodes))
	for _, n := range s.nodes {
		ns = append(ns, n)
	}
	slices.SortFunc(ns, func(a, b *node) int { return strings.Compare(a.name, b.name) })
	return ns
}

// Nodes is CLUSTER NODES.
func (s *State) Nodes() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.nodesDescription()
}

// Info is CLUSTER INFO, its fields in Redis's order.
func (s *State) Info() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	assigned, ok, pfail, fail := 0, 0, 0, 0
	for _, n := range s.slots {
		if n == nil {
			continue
		}
		assigned++
		switch {
		case n.failed():
			fail++
		case n.timedOut():
			pfail++
		default:
			ok++
		}
	}
	myEpoch := s.myself.configEpoch
	if s.myself.isReplica() && s.myself.primary != nil {
		myEpoch = s.myself.primary.configEpoch
	}
	var b strings.Builder
	fmt.Fprintf(&b, "cluster_state:%s\r\ncluster_slots_assigned:%d\r\ncluster_slots_ok:%d\r\ncluster_slots_pfail:%d\r\n"+
		"cluster_slots_fail:%d\r\ncluster_known_nodes:%d\r\ncluster_size:%d\r\ncluster_current_epoch:%d\r\ncluster_my_epoch:%d\r\n",
		stateName(s.state), assigned, ok, pfail, fail, len(s.nodes), s.size, s.currentEpoch, myEpoch)
	var total int64
	for i, c := range s.sent {
		if c != 0 {
			total += c
			fmt.Fprintf(&b, "cluster_stats_messages_%s_sent:%d\r\n", msgTypeNames[i], c)
		}
	}
	fmt.Fprintf(&b, "cluster_stats_messages_sent:%d\r\n", total)
	total = 0
	for i, c := range s.received {
		if c != 0 {
			total += c
			fmt.Fprintf(&b, "cluster_stats_messages_%s_received:%d\r\n", msgTypeNames[i], c)
		}
	}
	fmt.Fprintf(&b, "cluster_stats_messages_received:%d\r\ntotal_cluster_links_buffer_limit_exceeded:0\r\n", total)
	return b.String()
}

// NodeInfo describes a node for CLUSTER SLOTS and SHARDS.
type NodeInfo struct {
	ID, IP, Hostname string
	Port             int
	Replica, Failed  bool
	Offset           uint64
}

// SlotRange is a range of slots and the nodes serving it, the primary
// first (CLUSTER SLOTS).
type SlotRange struct {
	Start, End int
	Nodes      []NodeInfo
}

// Shard is a primary, its replicas and its slot ranges (CLUSTER SHARDS).
type Shard struct {
	Slots []int // start, end pairs
	Nodes []NodeInfo
}

func (s *State) nodeInfo(n *node) NodeInfo {
	return NodeInfo{ID: n.name, IP: n.ip, Hostname: n.hostname, Port: n.port, Replica: n.isReplica(), Failed: n.failed(), Offset: n.replOffset}
}

// SlotRanges is CLUSTER SLOTS: consecutive slots of one owner, with its
// replicas that are not failed and have replicated something.
func (s *State) SlotRanges() []SlotRange {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []SlotRange
	start := 0
	for j := 1; j <= Slots; j++ {
		if j < Slots && s.slots[j] == s.slots[start] {
			continue
		}
		if n := s.slots[start]; n != nil {
			r := SlotRange{Start: start, End: j - 1, Nodes: []NodeInfo{s.nodeInfo(n)}}
			for _, rep := range n.replicas {
				if !rep.failed() && rep.replOffset != 0 {
					r.Nodes = append(r.Nodes, s.nodeInfo(rep))
				}
			}
			out = append(out, r)
		}
		start = j
	}
	return out
}

// Shards is CLUSTER SHARDS.
func (s *State) Shards() []Shard {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Shard
	for _, n := range s.sortedNodes() {
		if !n.isPrimary() {
			continue
		}
		sh := Shard{Slots: []int{}, Nodes: []NodeInfo{s.nodeInfo(n)}}
		for _, r := range n.slotRanges() {
			sh.Slots = append(sh.Slots, r[0], r[1])
		}
		for _, rep := range n.replicas {
			sh.Nodes = append(sh.Nodes, s.nodeInfo(rep))
		}
		out = append(out, sh)
	}
	return out
}

// Replicas is CLUSTER REPLICAS: the lines of CLUSTER NODES of id's
// replicas.
func (s *State) Replicas(id string) ([]string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := s.nodes[id]
	if n == nil {
		return nil, ReplyError("Unknown node " + id)
	}
	if n.isReplica() {
		return nil, ReplyError("The specified node is not a master")
	}
	lines := make([]string, 0, len(n.replicas))
	for _, r := range n.replicas {
		lines = append(lines, s.describe(r))
	}
	return lines, nil
}

// Meet is CLUSTER MEET: a handshake with the node at ip, port and bus
// port starts (unless one is in progress).
func (s *State) Meet(ip string, port, cport int) error {
	addr, err := netip.ParseAddr(ip)
	if err != nil || port <= 0 || port > 65535 || cport <= 0 || cport > 65535 {
		return ReplyError("Invalid node address specified: " + ip + ":" + strconv.Itoa(port))
	}
	norm := addr.Unmap().String()
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, n := range s.nodes {
		if n.flags&flagHandshake != 0 && strings.EqualFold(n.ip, norm) && n.port == port && n.cport == cport {
			return nil
		}
	}
	n := s.newNode(newName(), flagHandshake|flagMeet)
	n.ip, n.port, n.cport = norm, port, cport
	s.addNode(n)
	s.afterChange()
	return nil
}

// ChangeSlots checks and applies ADDSLOTS(RANGE) or DELSLOTS(RANGE) of
// ranges (start, end pairs): every slot free (or assigned, to delete), none
// twice.
func (s *State) ChangeSlots(ranges []int, del bool) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	seen := make([]bool, Slots)
	for i := 0; i < len(ranges); i += 2 {
		for j := ranges[i]; j <= ranges[i+1]; j++ {
			switch {
			case del && s.slots[j] == nil:
				return refusef("Slot %d is already unassigned", j)
			case !del && s.slots[j] != nil:
				return refusef("Slot %d is already busy", j)
			case seen[j]:
				return refusef("Slot %d specified multiple times", j)
			}
			seen[j] = true
		}
	}
	for j, on := range seen {
		if !on {
			continue
		}
		s.importing[j] = nil
		if del {
			s.delSlot(j)
		} else {
			s.addSlot(s.myself, j)
		}
	}
	s.saveNeeded = true
	s.updateState()
	s.afterChange()
	return nil
}

// FlushSlots is CLUSTER FLUSHSLOTS (kv checked the keyspace is empty).
func (s *State) FlushSlots() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.delNodeSlots(s.myself)
	s.saveNeeded = true
	s.updateState()
	s.afterChange()
}

// SetSlot is CLUSTER SETSLOT slot action [node].
func (s *State) SetSlot(slot int, action, id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.myself.isReplica() {
		return ReplyError("Please use SETSLOT only with masters.")
	}
	n := s.nodes[id]
	switch action {
	case "migrating":
		if s.slots[slot] != s.myself {
			return refusef("I'm not the owner of hash slot %d", slot)
		}
		if n == nil {
			return ReplyError("I don't know about node " + id)
		}
		if n.isReplica() {
			return ReplyError("Target node is not a master")
		}
		s.migrating[slot] = n
	case "importing":
		if s.slots[slot] == s.myself {
			return refusef("I'm already the owner of hash slot %d", slot)
		}
		if n == nil {
			return ReplyError("I don't know about node " + id)
		}
		if n.isReplica() {
			return ReplyError("Target node is not a master")
		}
		s.importing[slot] = n
	case "stable":
		s.importing[slot], s.migrating[slot] = nil, nil
	case "node":
		if n == nil {
			return ReplyError("Unknown node " + id)
		}
		if n.isReplica() {
			return ReplyError("Target node is not a master")
		}
		keys := s.keysInSlot(slot)
		if s.slots[slot] == s.myself && n != s.myself && keys != 0 {
			return refusef("Can't assign hashslot %d to a different node while I still hold keys for this hash slot.", slot)
		}
		if keys == 0 && s.migrating[slot] != nil {
			s.migrating[slot] = nil
		}
		s.delSlot(slot)
		s.addSlot(n, slot)
		if n == s.myself && s.importing[slot] != nil {
			if s.bumpEpochWithoutConsensus() {
				s.logger.Warn("configEpoch updated after importing slot", "slot", slot)
			}
			s.importing[slot] = nil
			s.broadcastPong()
		}
	}
	s.routesDirty, s.saveNeeded = true, true
	s.updateState()
	s.afterChange()
	return nil
}

// BumpEpoch is CLUSTER BUMPEPOCH: "BUMPED n" or "STILL n".
func (s *State) BumpEpoch() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	word := "STILL"
	if s.bumpEpochWithoutConsensus() {
		word = "BUMPED"
	}
	s.afterChange()
	return word + " " + strconv.FormatUint(s.myself.configEpoch, 10)
}

// SetConfigEpoch is CLUSTER SET-CONFIG-EPOCH.
func (s *State) SetConfigEpoch(epoch int64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case epoch < 0:
		return refusef("Invalid config epoch specified: %d", epoch)
	case len(s.nodes) > 1:
		return ReplyError("The user can assign a config epoch only when the node does not know any other node.")
	case s.myself.configEpoch != 0:
		return ReplyError("Node config epoch is already non-zero")
	}
	s.myself.configEpoch = uint64(epoch)
	s.logger.Warn("configEpoch set via CLUSTER SET-CONFIG-EPOCH", "epoch", epoch)
	s.currentEpoch = max(s.currentEpoch, uint64(epoch))
	s.saveNeeded, s.routesDirty = true, true
	s.updateState()
	s.afterChange()
	return nil
}

// Forget is CLUSTER FORGET: the node is removed and kept out for a
// minute.
func (s *State) Forget(id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := s.nodes[id]
	switch {
	case n == nil:
		return ReplyError("Unknown node " + id)
	case n == s.myself:
		return ReplyError("I tried hard but I can't forget myself...")
	case s.myself.isReplica() && s.myself.primary == n:
		return ReplyError("Can't forget my master!")
	}
	s.blacklist[id] = nowMs() + blacklistTTL
	s.delNode(n)
	s.saveNeeded = true
	s.updateState()
	s.afterChange()
	return nil
}

// CountFailureReports is CLUSTER COUNT-FAILURE-REPORTS.
func (s *State) CountFailureReports(id string) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := s.nodes[id]
	if n == nil {
		return 0, ReplyError("Unknown node " + id)
	}
	return s.failureReports(n), nil
}

// SaveConfig is CLUSTER SAVECONFIG.
func (s *State) SaveConfig() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.saveConfig(); err != nil {
		return ReplyError("error saving the cluster node config: " + err.Error())
	}
	return nil
}

// Reset is CLUSTER RESET (kv checked a primary holds no keys): the open
// slots and this node's slots go, every other node is forgotten; HARD
// also takes a new ID and zeroes the epochs.
func (s *State) Reset(hard bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.myself.isReplica() {
		s.setNodeAsPrimary(s.myself)
	}
	for j := range Slots {
		s.importing[j], s.migrating[j] = nil, nil
	}
	s.delNodeSlots(s.myself)
	for _, n := range s.nodes {
		if n != s.myself {
			s.delNode(n)
		}
	}
	if hard {
		s.currentEpoch, s.lastVoteEpoch, s.myself.configEpoch = 0, 0, 0
		old := s.myself.name
		s.renameNode(s.myself, newName())
		s.logger.Info("node hard reset", "old", old, "myid", s.myself.name)
	}
	s.saveNeeded = true
	s.updateState()
	s.afterChange()
}

// LinkInfo describes one bus link for CLUSTER LINKS.
type LinkInfo struct {
	Direction, Node string
	CreateTime      int64
	Events          string
}

// Links is CLUSTER LINKS: the outbound link to each node, then the
// inbound ones whose node is known.
func (s *State) Links() []LinkInfo {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []LinkInfo
	for _, n := range s.sortedNodes() {
		if n == s.myself {
			continue
		}
		if n.link != nil {
			out = append(out, LinkInfo{Direction: "to", Node: n.name, CreateTime: n.link.ctime, Events: "rw"})
		}
		if n.inbound != nil {
			out = append(out, LinkInfo{Direction: "from", Node: n.name, CreateTime: n.inbound.ctime, Events: "r"})
		}
	}
	return out
}

// Known reports whether id is a node of the table (REPLICATE's check).
func (s *State) Known(id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.nodes[id] != nil
}

// HasSlots reports whether this node serves slots.
func (s *State) HasSlots() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.myself.numSlots > 0
}

// IsReplica reports whether this node is a replica.
func (s *State) IsReplica() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.myself.isReplica()
}

// Replicate is CLUSTER REPLICATE (kv checked a primary is empty): this
// node becomes a replica of id, whose address it returns for kv to
// replicate from.
func (s *State) Replicate(id string, hasKeys bool) (ip string, port int, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := s.nodes[id]
	switch {
	case n == nil:
		return "", 0, ReplyError("Unknown node " + id)
	case n == s.myself:
		return "", 0, ReplyError("Can't replicate myself")
	case n.isReplica():
		return "", 0, ReplyError("I can only replicate a master, not a replica.")
	case s.myself.isPrimary() && (s.myself.numSlots != 0 || hasKeys):
		return "", 0, ReplyError("To set a master the node must be empty and without assigned slots.")
	}
	me := s.myself
	if me.isPrimary() {
		me.flags &^= flagMaster | flagMigrateTo
		me.flags |= flagSlave
		for j := range Slots {
			s.importing[j], s.migrating[j] = nil, nil
		}
	} else if me.primary != nil {
		me.primary.removeReplica(me)
	}
	me.primary = n
	n.addReplica(me)
	s.saveNeeded, s.routesDirty = true, true
	s.updateState()
	s.afterChange()
	return n.ip, n.port, nil
}

// ReplyError is a refusal in Redis's words: the reply's text without its
// "ERR " prefix.
type ReplyError string

func (e ReplyError) Error() string { return string(e) }

func refusef(format string, a ...any) error { return ReplyError(fmt.Sprintf(format, a...)) }
