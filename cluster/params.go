package cluster

import (
	"strconv"

	"github.com/shoalkv/shoal/config"
)

// OwnParams takes over the cluster's run-time settings of t: CONFIG GET
// reads them here and CONFIG SET applies them at once (the announced
// address and hostname reach the other nodes with the next PING). The
// values t was given at startup are applied now.
func (s *State) OwnParams(t *config.Table) {
	t.Own("cluster-node-timeout", config.Owner{
		Get: func() string { return strconv.FormatInt(s.nodeTimeout.Load(), 10) },
		Set: func(v string) { n, _ := strconv.ParseInt(v, 10, 64); s.nodeTimeout.Store(n) },
	})
	yesNo := func(name string, b interface {
		Load() bool
		Store(bool)
	}, republish bool) {
		t.Own(name, config.Owner{
			Get: func() string { return config.FormatYesNo(b.Load()) },
			Set: func(v string) {
				b.Store(v == "yes")
				s.mu.Lock()
				s.updateState()
				if republish {
					s.routesDirty = true
				}
				s.afterChange()
				s.mu.Unlock()
			},
		})
	}
	t.Own("cluster-replica-validity-factor", config.Owner{
		Get: func() string { return strconv.FormatInt(s.validityFactor.Load(), 10) },
		Set: func(v string) { n, _ := strconv.ParseInt(v, 10, 64); s.validityFactor.Store(n) },
	})
	yesNo("cluster-replica-no-failover", &s.replicaNoFailover, false)
	yesNo("cluster-allow-replica-migration", &s.allowMigration, false)
	yesNo("cluster-require-full-coverage", &s.requireFullCoverage, false)
	yesNo("cluster-allow-reads-when-down", &s.allowReadsWhenDown, true)
	text := func(name string, p interface {
		Load() *string
		Store(*string)
	}) {
		t.Own(name, config.Owner{
			Get: func() string { return *p.Load() },
			Set: func(v string) { p.Store(&v); s.addressChanged() },
		})
	}
	text("cluster-announce-ip", &s.announceIP)
	text("cluster-announce-hostname", &s.announceHostname)
	port := func(name string, p interface {
		Load() int64
		Store(int64)
	}) {
		t.Own(name, config.Owner{
			Get: func() string { return strconv.FormatInt(p.Load(), 10) },
			Set: func(v string) { n, _ := strconv.ParseInt(v, 10, 64); p.Store(n); s.addressChanged() },
		})
	}
	port("cluster-announce-port", &s.announcePort)
	port("cluster-announce-bus-port", &s.announceBusPort)
}

func (s *State) addressChanged() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.updateMyselfAddr()
	s.saveNeeded = true
	s.afterChange()
}
