package main

import (
	"math"
	"testing"
)

func TestParseProcStat(t *testing.T) {
	in := "cpu  100 5 40 800 10 3 7 0 0 0\ncpu0 50 2 20 400 5 1 3 0 0 0\nintr 1 2 3\n"
	if h := parseProcStat(in); !h.ok || h.system != 40 || h.irq != 10 || h.busy != 965-810 {
		t.Errorf("parseProcStat = %+v; want system 40, irq 10, busy 155, ok", h)
	}
	if h := parseProcStat("cpu0 1 2 3\n"); h.ok {
		t.Error("no aggregate cpu line, yet ok")
	}
	if h := parseProcStat("cpu 1 2 x 4 5 6 7 8\n"); h.ok {
		t.Error("a field that is not a number, yet ok")
	}
}

// TestCPUBetween: seconds and µs per request from two samples; a side
// unreadable in either sample stays zero rather than being wrong.
func TestCPUBetween(t *testing.T) {
	a := cpuSample{server: 100, client: 50, serverOK: true, clientOK: true, host: hostCPU{system: 10, irq: 5, busy: 300, ok: true}}
	b := cpuSample{server: 300, client: 150, serverOK: true, host: hostCPU{system: 30, irq: 45, busy: 700, ok: true}}
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
