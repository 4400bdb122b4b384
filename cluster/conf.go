package cluster

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// nodesDescription is CLUSTER NODES: one line per node, in Redis's
// format, which nodes.conf shares.
func (s *State) nodesDescription() string {
	var b strings.Builder
	for _, n := range s.sortedNodes() {
		b.WriteString(s.describe(n))
		b.WriteByte('\n')
	}
	return b.String()
}

// saveConfig writes nodes.conf (a temporary file renamed over it, synced)
// with the nodes and the epochs; under mu.
func (s *State) saveConfig() error {
	name := s.opts.ConfigFile
	if name == "" {
		return nil
	}
	content := s.nodesDescription() + "vars currentEpoch " + strconv.FormatUint(s.currentEpoch, 10) +
		" lastVoteEpoch " + strconv.FormatUint(s.lastVoteEpoch, 10) + "\n"
	tmp, err := os.CreateTemp(filepath.Dir(name), ".nodes-*.conf")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.WriteString(content); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), name)
}

// loadConfig reads nodes.conf as Redis's clusterLoadConfig does; false
// when there is none. A line it cannot read refuses the start, naming it.
func (s *State) loadConfig(name string) (bool, error) {
	if name == "" {
		return false, nil
	}
	f, err := os.Open(name)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("cluster: loading the node configuration: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	lineNo := 0
	for sc.Scan() {
		lineNo++
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		if err := s.loadLine(strings.Fields(line)); err != nil {
			return false, fmt.Errorf("cluster: unrecoverable error in %s line %d (%q): %v", name, lineNo, line, err)
		}
	}
	if err := sc.Err(); err != nil {
		return false, fmt.Errorf("cluster: reading %s: %w", name, err)
	}
	if s.myself == nil {
		if len(s.nodes) == 0 {
			return false, nil // an empty file, as Redis: a new node
		}
		return false, fmt.Errorf("cluster: %s has no line for myself", name)
	}
	for _, n := range s.nodes {
		s.currentEpoch = max(s.currentEpoch, n.configEpoch)
	}
	return true, nil
}

func (s *State) lookupOrCreate(name string) (*node, error) {
	if !validName(name) {
		return nil, fmt.Errorf("invalid node ID %q", name)
	}
	n := s.nodes[name]
	if n == nil {
		n = s.newNode(name, 0)
		s.addNode(n)
	}
	return n, nil
}

func (s *State) loadLine(f []string) error {
	if f[0] == "vars" {
		if len(f)%2 != 1 {
			return errors.New("vars needs name value pairs")
		}
		for j := 1; j < len(f); j += 2 {
			v, err := strconv.ParseUint(f[j+1], 10, 64)
			if err != nil {
				return fmt.Errorf("vars %s: %v", f[j], err)
			}
			switch strings.ToLower(f[j]) {
			case "currentepoch":
				s.currentEpoch = v
			case "lastvoteepoch":
				s.lastVoteEpoch = v
			}
		}
		return nil
	}
	if len(f) < 8 {
		return errors.New("a node line has at least 8 fields")
	}
	n, err := s.lookupOrCreate(f[0])
	if err != nil {
		return err
	}
	addr := f[1]
	if i := strings.IndexByte(addr, ','); i >= 0 {
		n.hostname = addr[i+1:]
		addr = addr[:i]
	}
	at := strings.LastIndexByte(addr, '@')
	colon := strings.LastIndexByte(addr, ':')
	if colon < 0 {
		return errors.New("the address has no port")
	}
	end := len(addr)
	if at > colon {
		end = at
		n.cport, _ = strconv.Atoi(addr[at+1:])
	}
	n.ip = addr[:colon]
	n.port, _ = strconv.Atoi(addr[colon+1 : end])
	if at < colon {
		n.cport = n.port + defaultBusOffset
	}
	n.flags = parseFlags(f[2])
	if n.flags&flagMyself != 0 {
		s.myself = n
	}
	if f[3] != "-" {
		p, err := s.lookupOrCreate(f[3])
		if err != nil {
			return err
		}
		p.addReplica(n)
		n.primary = p
	}
	if f[4] != "0" {
		n.pingSent = nowMs()
	}
	if f[5] != "0" {
		n.pongReceived = nowMs()
	}
	epoch, err := strconv.ParseUint(f[6], 10, 64)
	if err != nil {
		return fmt.Errorf("config epoch: %v", err)
	}
	if !(n.isReplica() && n.primary != nil) {
		n.configEpoch = epoch
	}
	for _, r := range f[8:] {
		if err := s.loadSlots(n, r); err != nil {
			return err
		}
	}
	return nil
}

func (s *State) loadSlots(n *node, r string) error {
	if strings.HasPrefix(r, "[") {
		body := strings.TrimSuffix(r[1:], "]")
		dir := "->-"
		i := strings.Index(body, dir)
		if i < 0 {
			dir = "-<-"
			i = strings.Index(body, dir)
		}
		if i < 0 {
			return fmt.Errorf("open slot %q", r)
		}
		slot, err := strconv.Atoi(body[:i])
		if err != nil || slot < 0 || slot >= Slots {
			return fmt.Errorf("open slot %q", r)
		}
		peer, err := s.lookupOrCreate(body[i+3:])
		if err != nil {
			return err
		}
		if dir == "->-" {
			s.migrating[slot] = peer
		} else {
			s.importing[slot] = peer
		}
		return nil
	}
	lo, hi, found := strings.Cut(r, "-")
	if !found {
		hi = lo
	}
	start, err1 := strconv.Atoi(lo)
	stop, err2 := strconv.Atoi(hi)
	if err1 != nil || err2 != nil || start < 0 || stop >= Slots || start > stop {
		return fmt.Errorf("slot range %q", r)
	}
	for j := start; j <= stop; j++ {
		s.delSlot(j)
		s.addSlot(n, j)
	}
	return nil
}

// updateMyselfAddr applies the announce settings to myself.
func (s *State) updateMyselfAddr() {
	me := s.myself
	port, pport, cport := s.announcedPorts()
	me.port, me.pport, me.cport = port, pport, cport
	if ip := *s.announceIP.Load(); ip != "" {
		me.ip = ip
	}
	me.hostname = *s.announceHostname.Load()
	s.routesDirty = true
}
