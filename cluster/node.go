package cluster

import (
	"crypto/rand"
	"encoding/hex"
	"strconv"
	"strings"
)

// node is one node of the cluster as this node sees it (Redis's
// clusterNode). Every field is guarded by State.mu.
type node struct {
	name     string // 40 hex characters
	flags    uint16
	ip       string // "" until known (myself before the first MEET)
	port     int    // the client port
	cport    int    // the bus port
	pport    int    // the plaintext port when port is TLS
	hostname string

	primary     *node // set on a replica
	replicas    []*node
	configEpoch uint64
	slots       [Slots / 8]byte
	numSlots    int

	ctime        int64 // ms: when the node entered the table
	pingSent     int64 // ms: the PING we wait a PONG for, 0 for none
	pongReceived int64 // ms
	dataReceived int64 // ms
	failTime     int64 // ms: when it was marked FAIL
	failReports  map[*node]int64
	replOffset   uint64
	votedTime    int64 // ms: when this node last voted for a replica of it

	link         *outLink // the link we ping on, nil while disconnected
	inbound      *inLink  // the link it pings us on, if known
	lastInGossip uint64   // the ping counter when last put in a gossip section
}

// newName returns a random node ID.
func newName() string {
	var b [nameLen / 2]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// validName reports whether s can be a node ID: 40 hex characters.
func validName(s string) bool {
	if len(s) != nameLen {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return false
		}
	}
	return true
}

func (n *node) isPrimary() bool { return n.flags&flagMaster != 0 }
func (n *node) isReplica() bool { return n.flags&flagSlave != 0 }
func (n *node) failed() bool    { return n.flags&flagFail != 0 }
func (n *node) timedOut() bool  { return n.flags&flagPFail != 0 }

func (n *node) hasSlot(slot int) bool { return n.slots[slot>>3]&(1<<(slot&7)) != 0 }

func (n *node) setSlotBit(slot int) {
	if !n.hasSlot(slot) {
		n.slots[slot>>3] |= 1 << (slot & 7)
		n.numSlots++
	}
}

func (n *node) clearSlotBit(slot int) {
	if n.hasSlot(slot) {
		n.slots[slot>>3] &^= 1 << (slot & 7)
		n.numSlots--
	}
}

// bitSet reports whether bitmap, a slots bitmap as the bus carries it,
// has slot.
func bitSet(bitmap *[Slots / 8]byte, slot int) bool { return bitmap[slot>>3]&(1<<(slot&7)) != 0 }

// flagNames is Redis's table of the flags CLUSTER NODES shows, in its order.
var flagNames = []struct {
	flag uint16
	name string
}{
	{flagMyself, "myself"}, {flagMaster, "master"}, {flagSlave, "slave"}, {flagPFail, "fail?"},
	{flagFail, "fail"}, {flagHandshake, "handshake"}, {flagNoAddr, "noaddr"}, {flagNoFailover, "nofailover"},
}

// flagList is flags as CLUSTER NODES writes them: "myself,master", or
// "noflags".
func flagList(flags uint16) string {
	var names []string
	for _, f := range flagNames {
		if flags&f.flag != 0 {
			names = append(names, f.name)
		}
	}
	if len(names) == 0 {
		return "noflags"
	}
	return strings.Join(names, ",")
}

// parseFlags reads a flag list of nodes.conf.
func parseFlags(s string) uint16 {
	var flags uint16
	for _, name := range strings.Split(s, ",") {
		switch name {
		case "myself":
			flags |= flagMyself
		case "master":
			flags |= flagMaster
		case "slave":
			flags |= flagSlave
		case "fail?":
			flags |= flagPFail
		case "fail":
			flags |= flagFail
		case "handshake":
			flags |= flagHandshake
		case "noaddr":
			flags |= flagNoAddr
		case "nofailover":
			flags |= flagNoFailover
		}
	}
	return flags
}

// slotRanges returns the slots of n as [start, end] pairs, ascending.
func (n *node) slotRanges() [][2]int {
	var r [][2]int
	if n.numSlots == 0 {
		return nil
	}
	start := -1
	for j := 0; j <= Slots; j++ {
		has := j < Slots && n.hasSlot(j)
		if has && start < 0 {
			start = j
		}
		if !has && start >= 0 {
			r = append(r, [2]int{start, j - 1})
			start = -1
		}
	}
	return r
}

// describe is n's line of CLUSTER NODES and nodes.conf (without the
// newline), as Redis's clusterGenNodeDescription writes it.
func (s *State) describe(n *node) string {
	var b strings.Builder
	b.WriteString(n.name)
	b.WriteByte(' ')
	b.WriteString(n.ip)
	b.WriteByte(':')
	b.WriteString(strconv.Itoa(n.port))
	b.WriteByte('@')
	b.WriteString(strconv.Itoa(n.cport))
	if n.hostname != "" {
		b.WriteByte(',')
		b.WriteString(n.hostname)
	}
	b.WriteByte(' ')
	b.WriteString(flagList(n.flags))
	b.WriteByte(' ')
	if n.primary != nil {
		b.WriteString(n.primary.name)
	} else {
		b.WriteByte('-')
	}
	epoch := n.configEpoch
	if n.isReplica() && n.primary != nil {
		epoch = n.primary.configEpoch
	}
	linkState := "disconnected"
	if n.link != nil || n.flags&flagMyself != 0 {
		linkState = "connected"
	}
	b.WriteString(" " + strconv.FormatInt(n.pingSent, 10) + " " + strconv.FormatInt(n.pongReceived, 10) +
		" " + strconv.FormatUint(epoch, 10) + " " + linkState)
	for _, r := range n.slotRanges() {
		if r[0] == r[1] {
			b.WriteString(" " + strconv.Itoa(r[0]))
		} else {
			b.WriteString(" " + strconv.Itoa(r[0]) + "-" + strconv.Itoa(r[1]))
		}
	}
	if n.flags&flagMyself != 0 {
		for j := 0; j < Slots; j++ {
			if to := s.migrating[j]; to != nil {
				b.WriteString(" [" + strconv.Itoa(j) + "->-" + to.name + "]")
			} else if from := s.importing[j]; from != nil {
				b.WriteString(" [" + strconv.Itoa(j) + "-<-" + from.name + "]")
			}
		}
	}
	return b.String()
}
