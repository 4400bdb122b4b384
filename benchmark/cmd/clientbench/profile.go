package main

import (
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
)

// profiles collects profiles of this process, which runs only the clients,
// to find where a client spends its time: run one client on one cell, e.g.
//
//	clientbench -servers shoal -ops get -goroutines 10000 -clients shoal-client -cpuprofile cpu.out
//
// Mutex and blocking events are sampled over the measured periods only
// (every event); the CPU profile covers the whole run, the keyspace fill
// and warm-ups included, since Go's CPU profiler cannot pause.
var profiles profileSet

type profileSet struct {
	cpu, mutex, block string
	cpuFile           *os.File
}

func (p *profileSet) start() error {
	if p.cpu != "" {
		f, err := os.Create(p.cpu)
		if err != nil {
			return err
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			f.Close()
			return err
		}
		p.cpuFile = f
	}
	return nil
}

// resume samples every contended mutex and every blocking event.
func (p *profileSet) resume() {
	if p.mutex != "" {
		runtime.SetMutexProfileFraction(1)
	}
	if p.block != "" {
		runtime.SetBlockProfileRate(1)
	}
}

func (p *profileSet) pause() {
	if p.mutex != "" {
		runtime.SetMutexProfileFraction(0)
	}
	if p.block != "" {
		runtime.SetBlockProfileRate(0)
	}
}

func (p *profileSet) stop() error {
	if p.cpuFile != nil {
		pprof.StopCPUProfile()
		if err := p.cpuFile.Close(); err != nil {
			return err
		}
	}
	for _, w := range []struct{ name, file string }{{"mutex", p.mutex}, {"block", p.block}} {
		if w.file == "" {
			continue
		}
		f, err := os.Create(w.file)
		if err != nil {
			return err
		}
		if err := pprof.Lookup(w.name).WriteTo(f, 0); err != nil {
			f.Close()
			return fmt.Errorf("writing the %s profile: %w", w.name, err)
		}
		if err := f.Close(); err != nil {
			return err
		}
	}
	return nil
}
