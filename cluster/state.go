package cluster

import (
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"
)

// Options configures a State.
type Options struct {
	// Port is the client port this node announces (cluster-announce-port
	// overrides it), BusPort its bus port (cluster-port; 0: Port+10000).
	Port, BusPort int
	// ConfigFile is nodes.conf's path (cluster-config-file), written on
	// every change and read at start.
	ConfigFile string
	// Logger receives the bus's events; default slog.Default().
	Logger *slog.Logger
}

// Data is what the cluster asks of the node's keyspace (package kv).
type Data interface {
	// KeysInSlot counts the keys in a slot, for SETSLOT NODE's refusal
	// and for slots lost to another owner.
	KeysInSlot(slot int) int
	// DeleteKeysInSlot deletes the keys of a slot this node lost.
	DeleteKeysInSlot(slot int)
	// ReplOffset is the replication offset PINGs carry.
	ReplOffset() uint64
	// ReplicaLink describes the link to the primary this node
	// replicates, for the election's checks.
	ReplicaLink() ReplicaLink
	// Promote makes the node a primary at the replication level, keeping
	// its data and continuing its history (REPLICAOF NO ONE), when it
	// won an election or took over.
	Promote()
	// Follow makes the node a replica of ip:port (REPLICAOF ip port),
	// when it lost its slots to that node or restarted as a replica.
	Follow(ip string, port int)
	// Deliver hands a message published on another node to this node's
	// subscribers of channel (and, unless shard, of the patterns it
	// matches).
	Deliver(channel, payload []byte, shard bool)
	// HoldWrites holds (on) or releases the clients' writes, for a
	// manual failover of this primary; when it returns with on, no write
	// runs any more and ReplOffset is final.
	HoldWrites(on bool)
}

// ReplicaLink is the state of a replica's link to its primary.
type ReplicaLink struct {
	// Following is true while the node replicates a primary (it has a
	// replicaof address, connected or not).
	Following bool
	// DataAge is how many milliseconds ago the primary was last heard
	// from while connected, or since the link went down.
	DataAge int64
	// PingPeriod is repl-ping-replica-period in milliseconds.
	PingPeriod int64
}

// SetData connects the keyspace; call it before Start.
func (s *State) SetData(d Data) {
	s.mu.Lock()
	s.data = d
	s.mu.Unlock()
}

func (s *State) keysInSlot(slot int) int {
	if s.data == nil {
		return 0
	}
	return s.data.KeysInSlot(slot)
}

// Cluster states.
const (
	stateOK   = 0
	stateFail = 1
)

// Delays of Redis's cluster.c.
const (
	writableDelay    = 2000 // ms a restarted primary waits before turning OK
	minRejoinDelay   = 500
	maxRejoinDelay   = 5000
	failReportMult   = 2 // fail reports live node-timeout * this
	failUndoMult     = 2
	blacklistTTL     = 60 * 1000
	cronInterval     = 100 * time.Millisecond
	defaultBusOffset = 10000
)

// State is this node's view of the cluster: the node table, slot owners,
// epochs, and the bus's links. Every field below mu is guarded by it;
// routes is read without it.
type State struct {
	opts   Options
	logger *slog.Logger
	routes atomic.Pointer[Routes]

	// The settings CONFIG changes at run time (params.go).
	nodeTimeout         atomic.Int64 // ms
	requireFullCoverage atomic.Bool
	allowReadsWhenDown  atomic.Bool
	announceIP          atomic.Pointer[string]
	announcePort        atomic.Int64
	announceBusPort     atomic.Int64
	announceHostname    atomic.Pointer[string]
	validityFactor      atomic.Int64
	replicaNoFailover   atomic.Bool
	allowMigration      atomic.Bool
	// writesHeld is true while this primary holds its writes for a
	// replica's manual failover (read by kv without the lock).
	writesHeld atomic.Bool

	mu            sync.Mutex
	data          Data
	myself        *node
	nodes         map[string]*node
	slots         [Slots]*node
	importing     [Slots]*node
	migrating     [Slots]*node
	currentEpoch  uint64
	lastVoteEpoch uint64
	state         int
	size          int
	sent          [msgTypes]int64
	received      [msgTypes]int64
	blacklist     map[string]int64 // FORGET's nodes: name -> ms it expires
	pingsSent     uint64
	pfailNodes    int
	firstUpdate   int64 // ms of the first updateState
	amongMinority int64 // ms this node last saw itself in a minority
	saveNeeded    bool
	routesDirty   bool
	inLinks       map[*inLink]struct{}
	election      election       // failover.go
	manual        manualFailover // manual.go
	promoting     bool           // a promotion runs on the worker
	work          worker         // worker.go
	kicks         chan struct{}  // buffered, 1: run beforeSleep now
	deliveries    []delivery     // pubsub.go

	stop     chan struct{}
	stopOnce sync.Once
	done     chan struct{}
}

func nowMs() int64 { return time.Now().UnixMilli() }

// New makes this node's State: loaded from ConfigFile when it exists,
// else a new node with a random ID, written there at once as Redis does.
func New(o Options) (*State, error) {
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.BusPort == 0 {
		o.BusPort = o.Port + defaultBusOffset
	}
	if o.Port <= 0 || o.Port > 65535 || o.BusPort <= 0 || o.BusPort > 65535 {
		return nil, fmt.Errorf("cluster: port %d and bus port %d must be from 1 to 65535", o.Port, o.BusPort)
	}
	s := &State{
		opts:      o,
		logger:    o.Logger,
		nodes:     make(map[string]*node),
		blacklist: make(map[string]int64),
		inLinks:   make(map[*inLink]struct{}),
		state:     stateFail,
		stop:      make(chan struct{}),
		kicks:     make(chan struct{}, 1),
		done:      make(chan struct{}),
	}
	s.nodeTimeout.Store(15000)
	s.requireFullCoverage.Store(true)
	s.validityFactor.Store(10)
	s.allowMigration.Store(true)
	s.manual.primaryOffset = -1
	s.work.init()
	empty := ""
	s.announceIP.Store(&empty)
	s.announceHostname.Store(&empty)
	s.mu.Lock()
	defer s.mu.Unlock()
	loaded, err := s.loadConfig(o.ConfigFile)
	if err != nil {
		return nil, err
	}
	if !loaded {
		s.myself = s.newNode(newName(), flagMyself|flagMaster)
		s.addNode(s.myself)
		s.logger.Info("no cluster configuration found", "myid", s.myself.name)
		if err := s.saveConfig(); err != nil {
			return nil, err
		}
	} else {
		s.logger.Info("cluster configuration loaded", "myid", s.myself.name, "file", o.ConfigFile)
	}
	s.updateMyselfAddr()
	s.publish()
	return s, nil
}

// Start runs the cron (pings, reconnections, failure detection) until
// Close.
func (s *State) Start() {
	go s.cronLoop()
	go s.work.run(s.stop)
}

// Close stops the cron and closes every link.
func (s *State) Close() {
	s.stopOnce.Do(func() {
		close(s.stop)
		<-s.done
		s.mu.Lock()
		for _, n := range s.nodes {
			if n.link != nil {
				n.link.close()
				n.link = nil
			}
		}
		s.mu.Unlock()
	})
}

// MyID returns this node's ID.
func (s *State) MyID() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.myself.name
}

func (s *State) newNode(name string, flags uint16) *node {
	return &node{name: name, flags: flags, ctime: nowMs(), failReports: make(map[*node]int64)}
}

func (s *State) addNode(n *node) { s.nodes[n.name] = n; s.routesDirty = true }

// delNode removes n from the table: its slots, its open slots, its
// failure reports about others, its links.
func (s *State) delNode(n *node) {
	for j := range Slots {
		if s.importing[j] == n {
			s.importing[j] = nil
		}
		if s.migrating[j] == n {
			s.migrating[j] = nil
		}
		if s.slots[j] == n {
			s.delSlot(j)
		}
	}
	for _, other := range s.nodes {
		delete(other.failReports, n)
	}
	if n.primary != nil {
		n.primary.removeReplica(n)
	}
	for _, r := range n.replicas {
		if r.primary == n {
			r.primary = nil
		}
	}
	if n.link != nil {
		n.link.close()
		n.link = nil
	}
	if n.inbound != nil {
		n.inbound.node = nil
		n.inbound = nil
	}
	delete(s.nodes, n.name)
	s.routesDirty = true
}

// renameNode gives a node met in a handshake its real name.
func (s *State) renameNode(n *node, name string) {
	delete(s.nodes, n.name)
	n.name = name
	s.nodes[name] = n
	s.routesDirty = true
}

func (n *node) removeReplica(r *node) {
	for i, x := range n.replicas {
		if x == r {
			n.replicas = append(n.replicas[:i], n.replicas[i+1:]...)
			break
		}
	}
	if len(n.replicas) == 0 {
		n.flags &^= flagMigrateTo
	}
}

func (n *node) addReplica(r *node) {
	for _, x := range n.replicas {
		if x == r {
			return
		}
	}
	n.replicas = append(n.replicas, r)
	n.flags |= flagMigrateTo
}

func (s *State) addSlot(n *node, slot int) bool {
	if s.slots[slot] != nil {
		return false
	}
	n.setSlotBit(slot)
	s.slots[slot] = n
	s.routesDirty = true
	return true
}

func (s *State) delSlot(slot int) bool {
	n := s.slots[slot]
	if n == nil {
		return false
	}
	n.clearSlotBit(slot)
	s.slots[slot] = nil
	s.routesDirty = true
	return true
}

func (s *State) delNodeSlots(n *node) {
	for j := range Slots {
		if s.slots[j] == n {
			s.delSlot(j)
		}
	}
}

// setNodeAsPrimary records that n now acts as a primary.
func (s *State) setNodeAsPrimary(n *node) {
	if n.isPrimary() {
		return
	}
	if n.primary != nil {
		n.primary.removeReplica(n)
		if n != s.myself {
			n.flags |= flagMigrateTo
		}
	}
	n.flags &^= flagSlave
	n.flags |= flagMaster
	n.primary = nil
	s.saveNeeded, s.routesDirty = true, true
}

// maxEpoch is the greatest config epoch known, or currentEpoch if greater.
func (s *State) maxEpoch() uint64 {
	m := s.currentEpoch
	for _, n := range s.nodes {
		m = max(m, n.configEpoch)
	}
	return m
}

// bumpEpochWithoutConsensus gives myself a new config epoch unless it
// already has the greatest one alone, as Redis's
// clusterBumpConfigEpochWithoutConsensus; true if it bumped.
func (s *State) bumpEpochWithoutConsensus() bool {
	m := s.maxEpoch()
	if s.myself.configEpoch == 0 || s.myself.configEpoch != m {
		s.currentEpoch++
		s.myself.configEpoch = s.currentEpoch
		s.saveNeeded = true
		s.logger.Warn("new configEpoch set", "epoch", s.myself.configEpoch)
		return true
	}
	return false
}

// handleEpochCollision gives myself a new config epoch when a primary of
// a greater ID has the same one (clusterHandleConfigEpochCollision).
func (s *State) handleEpochCollision(sender *node) {
	if sender.configEpoch != s.myself.configEpoch || !sender.isPrimary() || !s.myself.isPrimary() {
		return
	}
	if sender.name <= s.myself.name {
		return
	}
	s.currentEpoch++
	s.myself.configEpoch = s.currentEpoch
	s.saveNeeded = true
	s.logger.Info("configEpoch collision; configEpoch set", "with", sender.name, "epoch", s.myself.configEpoch)
}

// updateState computes the cluster's state as Redis's clusterUpdateState.
func (s *State) updateState() {
	now := nowMs()
	if s.firstUpdate == 0 {
		s.firstUpdate = now
	}
	if s.myself.isPrimary() && s.state == stateFail && now-s.firstUpdate < writableDelay {
		return
	}
	newState := stateOK
	if s.requireFullCoverage.Load() {
		for j := range Slots {
			if n := s.slots[j]; n == nil || n.failed() {
				newState = stateFail
				break
			}
		}
	}
	reachable := 0
	s.size = 0
	for _, n := range s.nodes {
		if n.isPrimary() && n.numSlots > 0 {
			s.size++
			if n.flags&(flagFail|flagPFail) == 0 {
				reachable++
			}
		}
	}
	if reachable < s.size/2+1 {
		newState = stateFail
		s.amongMinority = now
	}
	if newState != s.state {
		rejoin := min(max(s.nodeTimeout.Load(), minRejoinDelay), maxRejoinDelay)
		if newState == stateOK && s.myself.isPrimary() && now-s.amongMinority < rejoin {
			return
		}
		s.logger.Warn("cluster state changed", "state", stateName(newState))
		s.state = newState
		s.routesDirty = true
	}
}

func stateName(st int) string {
	if st == stateOK {
		return "ok"
	}
	return "fail"
}

// afterChange saves nodes.conf and republishes the routes if something
// changed them; every entry point calls it before releasing mu.
func (s *State) afterChange() {
	if s.saveNeeded {
		s.saveNeeded = false
		if err := s.saveConfig(); err != nil {
			s.logger.Error("saving the cluster configuration", "file", s.opts.ConfigFile, "err", err)
		}
	}
	if s.routesDirty {
		s.publish()
	}
}
