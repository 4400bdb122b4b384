package main

import (
	"fmt"
	"syscall"
	"time"

	"github.com/shoalkv/shoal/benchmark/internal/proc"
)

var serverDescs = map[string]string{
	"shoal": "./cmd/shoal, default options (GOMAXPROCS event loops)",
	"redis": "redis-server 7 from the system, no persistence",
}

// serverSpec is how clientbench starts name: "shoal" with the binary at
// shoalBin, or "redis".
func serverSpec(name, shoalBin string) (proc.Spec, error) {
	spec := proc.Spec{Name: name, Desc: serverDescs[name]}
	switch name {
	case "shoal":
		spec.Argv = func(port int) []string { return proc.ShoalArgv(shoalBin, port) }
	case "redis":
		spec.Argv = func(port int) []string { return proc.RedisArgv("redis-server", port) }
	default:
		return spec, fmt.Errorf("unknown server %q (want shoal or redis)", name)
	}
	return spec, nil
}

// selfCPU returns this process's user+system CPU time.
func selfCPU() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
