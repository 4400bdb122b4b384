package cluster

import (
	"encoding/binary"
	"log/slog"
	"strings"
	"testing"

	"github.com/shoalkv/shoal/internal/logtest"
)

// fakeData is a keyspace for failover decisions without a server.
type fakeData struct {
	link   ReplicaLink
	offset uint64
}

func (f *fakeData) KeysInSlot(int) int           { return 0 }
func (f *fakeData) DeleteKeysInSlot(int)         {}
func (f *fakeData) ReplOffset() uint64           { return f.offset }
func (f *fakeData) ReplicaLink() ReplicaLink     { return f.link }
func (f *fakeData) Promote()                     {}
func (f *fakeData) Follow(string, int)           {}
func (f *fakeData) HoldWrites(bool)              {}
func (f *fakeData) Deliver([]byte, []byte, bool) {}
func (f *fakeData) setAge(age int64) *fakeData   { f.link.DataAge = age; return f }

// failoverTable is a State of three primaries with slots (a, b, c) and a
// replica r of a, each node with a link whose messages the test reads;
// myself is me.
type failoverTable struct {
	s          *State
	a, b, c, r *node
	log        *logtest.Log
	links      map[*node]*outLink
}

func newFailoverTable(t *testing.T, me string) *failoverTable {
	t.Helper()
	ft := &failoverTable{log: new(logtest.Log), links: map[*node]*outLink{}}
	s, err := New(Options{Port: 7000, Logger: slog.New(slog.NewTextHandler(ft.log, nil))})
	if err != nil {
		t.Fatal(err)
	}
	s.nodeTimeout.Store(1000)
	s.mu.Lock()
	defer s.mu.Unlock()
	mk := func(name string, flags uint16) *node {
		if name == me {
			n := s.myself
			delete(s.nodes, n.name)
			n.name, n.flags = strings.Repeat(name, nameLen), flags|flagMyself
			s.nodes[n.name] = n
			return n
		}
		n := s.newNode(strings.Repeat(name, nameLen), flags)
		n.ip, n.port = "127.0.0.1", 7000
		l := &outLink{s: s, node: n, queue: make(chan []byte, 16), done: make(chan struct{})}
		n.link, ft.links[n] = l, l
		s.addNode(n)
		return n
	}
	ft.a, ft.b, ft.c = mk("a", flagMaster), mk("b", flagMaster), mk("c", flagMaster)
	ft.r = mk("d", flagSlave)
	ft.r.primary = ft.a
	ft.a.addReplica(ft.r)
	for j := range Slots {
		owner := []*node{ft.a, ft.b, ft.c}[j*3/Slots]
		s.addSlot(owner, j)
	}
	ft.a.configEpoch, ft.b.configEpoch, ft.c.configEpoch = 1, 2, 3
	s.currentEpoch = 3
	s.updateState()
	ft.s = s
	return ft
}

// sent returns the types of the messages queued on n's link.
func (ft *failoverTable) sent(n *node) []int {
	var types []int
	for {
		select {
		case b := <-ft.links[n].queue:
			types = append(types, int(binary.BigEndian.Uint16(b[offType:])))
		default:
			return types
		}
	}
}

// request is r's FAILOVER_AUTH_REQUEST for epoch, claiming a's slots with
// a's config epoch.
func (ft *failoverTable) request(epoch uint64, force bool) *message {
	m := &message{}
	m.typ, m.currentEpoch, m.configEpoch = msgFailoverAuthRequest, epoch, ft.a.configEpoch
	m.slots = ft.a.slots
	if force {
		m.mflags[0] |= mflag0ForceAck
	}
	return m
}

// TestVoteRules: a primary with slots votes for a replica of a failed
// primary once per epoch, not twice for the same primary within twice
// the node timeout, not while the primary is up unless FORCEACK, not for
// a stale epoch or a claim older than the slots' owner.
func TestVoteRules(t *testing.T) {
	acks := func(ft *failoverTable) int {
		n := 0
		for _, typ := range ft.sent(ft.r) {
			if typ == msgFailoverAuthAck {
				n++
			}
		}
		return n
	}
	t.Run("primary up", func(t *testing.T) {
		ft := newFailoverTable(t, "b")
		ft.s.voteIfNeeded(ft.r, ft.request(4, false))
		if acks(ft) != 0 || !strings.Contains(ft.log.String(), "its master is up") {
			t.Fatalf("voted for a replica of a live primary:\n%s", ft.log.String())
		}
		ft.s.currentEpoch = 4
		ft.s.voteIfNeeded(ft.r, ft.request(4, true))
		if acks(ft) != 1 {
			t.Fatalf("no vote with FORCEACK:\n%s", ft.log.String())
		}
	})
	t.Run("once per epoch and primary", func(t *testing.T) {
		ft := newFailoverTable(t, "b")
		ft.a.flags |= flagFail
		ft.s.currentEpoch = 4
		ft.s.voteIfNeeded(ft.r, ft.request(4, false))
		ft.s.voteIfNeeded(ft.r, ft.request(4, false))
		if acks(ft) != 1 || !strings.Contains(ft.log.String(), "already voted for this epoch") {
			t.Fatalf("votes in one epoch: want 1\n%s", ft.log.String())
		}
		ft.s.currentEpoch = 5
		ft.s.voteIfNeeded(ft.r, ft.request(5, false))
		if acks(ft) != 0 || !strings.Contains(ft.log.String(), "can't vote about this master yet") {
			t.Fatalf("voted twice for one primary within twice the node timeout:\n%s", ft.log.String())
		}
	})
	t.Run("stale epoch and older claim", func(t *testing.T) {
		ft := newFailoverTable(t, "b")
		ft.a.flags |= flagFail
		ft.s.currentEpoch = 6
		ft.s.voteIfNeeded(ft.r, ft.request(5, false))
		m := ft.request(6, false)
		m.slots = ft.c.slots // c's slots, epoch 3, claimed with a's 1
		ft.s.voteIfNeeded(ft.r, m)
		if acks(ft) != 0 || !strings.Contains(ft.log.String(), "request epoch < current epoch") ||
			!strings.Contains(ft.log.String(), "a slot has a greater epoch") {
			t.Fatalf("voted for a stale request:\n%s", ft.log.String())
		}
	})
	t.Run("replicas and slotless primaries do not vote", func(t *testing.T) {
		ft := newFailoverTable(t, "d")
		ft.a.flags |= flagFail
		ft.s.currentEpoch = 4
		ft.s.voteIfNeeded(ft.b, ft.request(4, true))
		if got := ft.sent(ft.b); len(got) != 0 {
			t.Fatalf("a replica answered a vote request: %v", got)
		}
	})
}

// TestElectionPreconditions: a replica of a failed primary schedules an
// election, unless cluster-replica-no-failover is set or its data is
// older than the validity factor allows (0: no limit); its request goes to
// every node once the delay passed, and a majority of votes promotes it.
func TestElectionPreconditions(t *testing.T) {
	start := func(t *testing.T, data *fakeData, setup func(*State)) *failoverTable {
		ft := newFailoverTable(t, "d")
		ft.s.data = data
		ft.a.flags |= flagFail
		setup(ft.s)
		ft.s.handleReplicaFailover()
		return ft
	}
	fresh := (&fakeData{link: ReplicaLink{PingPeriod: 10000}}).setAge(500)
	stale := (&fakeData{link: ReplicaLink{PingPeriod: 10000}}).setAge(1000 + 10000 + 10*1000 + 1)
	if ft := start(t, fresh, func(s *State) { s.replicaNoFailover.Store(true) }); ft.s.election.authTime != 0 {
		t.Fatal("cluster-replica-no-failover yes scheduled an election")
	}
	if ft := start(t, stale, func(*State) {}); ft.s.election.authTime != 0 {
		t.Fatal("a replica with data past the validity factor scheduled an election")
	}
	if ft := start(t, stale, func(s *State) { s.validityFactor.Store(0) }); ft.s.election.authTime == 0 {
		t.Fatal("cluster-replica-validity-factor 0 did not lift the data age limit")
	}
	ft := start(t, fresh, func(*State) {})
	if ft.s.election.authTime == 0 {
		t.Fatal("no election scheduled for a replica of a failed primary")
	}
	ft.s.election.authTime = nowMs() - 1 // the delay passed
	ft.s.handleReplicaFailover()
	if !ft.s.election.authSent || ft.s.election.authEpoch != 4 || ft.s.currentEpoch != 4 {
		t.Fatalf("election not started: %+v, current epoch %d", ft.s.election, ft.s.currentEpoch)
	}
	for _, n := range []*node{ft.a, ft.b, ft.c} {
		if got := ft.sent(n); len(got) != 1 || got[0] != msgFailoverAuthRequest {
			t.Fatalf("sent to %s: %v, want one FAILOVER_AUTH_REQUEST", n.name[:1], got)
		}
	}
	m := &message{}
	m.currentEpoch = 4
	ft.s.countVote(ft.b, m)
	ft.s.handleReplicaFailover()
	if ft.s.promoting {
		t.Fatal("promoted with one vote of three primaries")
	}
	ft.s.countVote(ft.c, m)
	ft.s.handleReplicaFailover()
	if !ft.s.promoting || ft.s.myself.configEpoch != 4 {
		t.Fatalf("not promoted with two votes of three: promoting %v, config epoch %d", ft.s.promoting, ft.s.myself.configEpoch)
	}
}
