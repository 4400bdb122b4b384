package main

import (
	"math"
	"testing"
)

func TestParseProcStat(t *testing.T) {
	in := "cpu  100 5 40 800 10 3 7 0 0 0\ncpu0 50 2 20 400 5 1 3 0 0 0\nintr 1 2 3\n"
	system, irq, busy, total, ok := parseProcStat(in)
	if !ok || system != 40 || irq != 10 || total != 965 || busy != 965-810 {
		t.Errorf("parseProcStat = system %d irq %d busy %d total %d ok %v; want 40 10 155 965 true", system, irq, busy, total, ok)
	}
	if _, _, _, _, ok := parseProcStat("cpu0 1 2 3\n"); ok {
		t.Error("no aggregate cpu line, yet ok")
	}
	if _, _, _, _, ok := parseProcStat("cpu 1 2 x 4 5 6 7 8\n"); ok {
		t.Error("a field that is not a number, yet ok")
	}
}

// TestCPUBetween: seconds and µs per request from two samples; a side
// unreadable in either sample stays zero rather than being wrong.
func TestCPUBetween(t *testing.T) {
	a := cpuSample{server: 100, client: 50, hostSystem: 10, hostIRQ: 5, hostBusy: 300, hostTotal: 1000, serverOK: true, clientOK: true, hostOK: true}
	b := cpuSample{server: 300, client: 150, hostSystem: 30, hostIRQ: 45, hostBusy: 700, hostTotal: 1800, serverOK: true, hostOK: true}
	c := cpuBetween(a, b, 4, 1_000_000)
	near := func(got, want float64) bool { return math.Abs(got-want) < 1e-9 }
	if !near(c.ServerSeconds, 2) || !near(c.ServerUsPerRequest, 2) || !near(c.HostSystemSeconds, 0.2) ||
		!near(c.HostIRQSeconds, 0.4) || !near(c.HostBusySeconds, 4) || !near(c.HostBusyUsPerRequest, 4) || !near(c.HostCPUs, 1) {
		t.Errorf("cpuBetween = %+v", c)
	}
	if c.ClientSeconds != 0 || c.ClientUsPerRequest != 0 {
		t.Errorf("client side unreadable at the end, yet %+v", c)
	}
	if z := cpuBetween(a, b, 4, 0); z.ServerUsPerRequest != 0 || z.ServerSeconds != 2 {
		t.Errorf("no requests: %+v", z)
	}
}
