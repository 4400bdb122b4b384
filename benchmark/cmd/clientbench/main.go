package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/shoalkv/shoal/benchmark/internal/proc"
	"github.com/shoalkv/shoal/internal/procfs"
)

type config struct {
	Servers    []string      `json:"servers"`
	Clients    []string      `json:"clients"`
	Ops        []string      `json:"ops"`
	Goroutines []int         `json:"goroutines"`
	Duration   time.Duration `json:"duration_ns"`
	Warmup     time.Duration `json:"warmup_ns"`
	Rounds     int           `json:"rounds"`
	Keys       int           `json:"keys"`
	ValueSize  int           `json:"value_size"`
}

func main() {
	var c config
	servers := flag.String("servers", "shoal,redis", "servers to run against")
	clients := flag.String("clients", strings.Join(clientNames, ","), "clients to compare")
	ops := flag.String("ops", "get,set", "commands: get, set")
	gs := flag.String("goroutines", "1,10,100,1000,10000", "goroutine counts")
	flag.DurationVar(&c.Duration, "duration", 2*time.Second, "measured time per cell")
	flag.DurationVar(&c.Warmup, "warmup", 500*time.Millisecond, "unmeasured time before each measurement")
	flag.IntVar(&c.Rounds, "rounds", 1, "rounds; figures are medians over rounds")
	flag.IntVar(&c.Keys, "keys", 10000, "keys in the keyspace")
	flag.IntVar(&c.ValueSize, "value-size", 16, "value size in bytes")
	out := flag.String("out", "", "output directory (default benchmark/results/client under the repository root)")
	again := flag.Bool("rerender", false, "only rewrite results.md and the charts from the output directory's results.json")
	flag.StringVar(&profiles.cpu, "cpuprofile", "", "write a CPU profile of the measured periods to this file")
	flag.StringVar(&profiles.mutex, "mutexprofile", "", "write a mutex contention profile of the measured periods to this file")
	flag.StringVar(&profiles.block, "blockprofile", "", "write a blocking profile of the measured periods to this file")
	flag.Parse()
	if *again {
		dir := *out
		if dir == "" {
			root, err := proc.ModuleRoot("clientbench")
			if err != nil {
				fatalf("%v", err)
			}
			dir = filepath.Join(root, "benchmark", "results", "client")
		}
		if err := rerender(dir); err != nil {
			fatalf("%v", err)
		}
		return
	}
	c.Servers, c.Clients, c.Ops = split(*servers), split(*clients), split(*ops)
	for _, s := range split(*gs) {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			fatalf("-goroutines: %q is not a positive count", s)
		}
		c.Goroutines = append(c.Goroutines, n)
	}
	if err := profiles.start(); err != nil {
		fatalf("%v", err)
	}
	err := run(c, *out)
	if perr := profiles.stop(); err == nil {
		err = perr
	}
	if err != nil {
		fatalf("%v", err)
	}
}

func split(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

func fatalf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "clientbench: "+format+"\n", args...)
	os.Exit(1)
}

func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, time.Now().Format("15:04:05 ")+format+"\n", args...)
}

// cell is one measured run: one client, server, command and goroutine
// count.
type cell struct {
	Server       string  `json:"server"`
	Client       string  `json:"client"`
	Op           string  `json:"op"`
	Goroutines   int     `json:"goroutines"`
	Round        int     `json:"round"`
	Calls        int64   `json:"calls"`
	Errors       int64   `json:"errors"`
	FirstError   string  `json:"first_error,omitempty"`
	Seconds      float64 `json:"seconds"`
	Throughput   float64 `json:"throughput"`
	ClientCPUus  float64 `json:"client_cpu_us_per_call"`
	ServerCPUus  float64 `json:"server_cpu_us_per_call"`
	P50us        float64 `json:"p50_us"`
	P99us        float64 `json:"p99_us"`
	OtherLoadCPU float64 `json:"-"`
}

func run(c config, out string) error {
	root, err := proc.ModuleRoot("clientbench")
	if err != nil {
		return err
	}
	if out == "" {
		out = filepath.Join(root, "benchmark", "results", "client")
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	logf("building ./cmd/shoal")
	tmp, err := os.MkdirTemp("", "clientbench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	shoalBin := filepath.Join(tmp, "shoal")
	if err := proc.GoBuild(root, "./cmd/shoal", shoalBin); err != nil {
		return err
	}
	started := time.Now()
	var cells []cell
	turn := 0
	for round := 1; round <= c.Rounds; round++ {
		for _, sname := range c.Servers {
			spec, err := serverSpec(sname, shoalBin)
			if err != nil {
				return err
			}
			srv, err := proc.Start(spec)
			if err != nil {
				return err
			}
			if err := fill(srv.Addr, c); err != nil {
				srv.Stop()
				return err
			}
			for _, op := range c.Ops {
				for _, g := range c.Goroutines {
					for i := range c.Clients {
						cname := c.Clients[(i+turn)%len(c.Clients)]
						res, err := measure(c, srv, cname, op, g)
						if err != nil {
							srv.Stop()
							return fmt.Errorf("%s on %s, %s × %d: %w", cname, sname, op, g, err)
						}
						res.Round = round
						logf("round %d %-5s %-3s %5d goroutines %-13s %9.0f calls/s  client %6.2f µs  server %6.2f µs  p50 %8.1f µs  p99 %8.1f µs  errors %d",
							round, sname, op, g, cname, res.Throughput, res.ClientCPUus, res.ServerCPUus, res.P50us, res.P99us, res.Errors)
						cells = append(cells, res)
					}
					turn++
				}
			}
			srv.Stop()
		}
	}
	return report(out, c, cells, started)
}

// fill SETs every key once so GETs find values.
func fill(addr string, c config) error {
	kc, err := newClient("shoal-client", addr)
	if err != nil {
		return err
	}
	defer kc.Close()
	val := []byte(strings.Repeat("v", c.ValueSize))
	var wg sync.WaitGroup
	var failed atomic.Value
	for w := 0; w < 64; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < c.Keys; i += 64 {
				if err := kc.Set(context.Background(), keyName(i), val); err != nil {
					failed.Store(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if err, _ := failed.Load().(error); err != nil {
		return fmt.Errorf("filling the keyspace: %w", err)
	}
	return nil
}

func keyName(i int) string { return "key:" + strconv.Itoa(i) }

// Phases of a cell, read by every worker after each call.
const (
	phaseWarmup = iota
	phaseMeasure
	phaseStop
)

// worker is one goroutine's tally, kept apart from the others'.
type worker struct {
	calls, errors int64
	firstErr      error
	hist          hist
	_             [64]byte
}

// measure runs g goroutines calling op through a new client cname for the
// warm-up and the measured duration.
func measure(c config, srv *proc.Server, cname, op string, g int) (cell, error) {
	kc, err := newClient(cname, srv.Addr)
	if err != nil {
		return cell{}, err
	}
	defer kc.Close()
	keys := make([]string, c.Keys)
	for i := range keys {
		keys[i] = keyName(i)
	}
	val := []byte(strings.Repeat("w", c.ValueSize))
	var phase atomic.Int32
	workers := make([]worker, g)
	var wg sync.WaitGroup
	ctx := context.Background()
	for i := range workers {
		wg.Add(1)
		go func(w *worker, k int) {
			defer wg.Done()
			for {
				p := phase.Load()
				if p == phaseStop {
					return
				}
				k = (k + 1) % len(keys)
				t0 := time.Now()
				var err error
				if op == "get" {
					err = kc.Get(ctx, keys[k])
				} else {
					err = kc.Set(ctx, keys[k], val)
				}
				d := time.Since(t0)
				if p != phaseMeasure {
					continue
				}
				if err != nil {
					w.errors++
					if w.firstErr == nil {
						w.firstErr = err
					}
					continue
				}
				w.calls++
				w.hist[bucket(uint64(d))]++
			}
		}(&workers[i], i*7919)
	}
	time.Sleep(c.Warmup)
	pid := srv.PID()
	cpu0, t0 := selfCPU(), time.Now()
	sticks0, err := procfs.CPUTicks(pid)
	if err != nil {
		return cell{}, err
	}
	phase.Store(phaseMeasure)
	profiles.resume()
	time.Sleep(c.Duration)
	profiles.pause()
	phase.Store(phaseStop)
	cpu1, t1 := selfCPU(), time.Now()
	sticks1, err := procfs.CPUTicks(pid)
	if err != nil {
		return cell{}, err
	}
	wg.Wait()
	res := cell{Server: srv.Spec.Name, Client: cname, Op: op, Goroutines: g, Seconds: t1.Sub(t0).Seconds()}
	var h hist
	for i := range workers {
		w := &workers[i]
		res.Calls += w.calls
		res.Errors += w.errors
		if w.firstErr != nil && res.FirstError == "" {
			res.FirstError = w.firstErr.Error()
		}
		h.add(&w.hist)
	}
	if res.Calls == 0 {
		return res, fmt.Errorf("no call succeeded; first error: %s", res.FirstError)
	}
	n := float64(res.Calls + res.Errors)
	res.Throughput = float64(res.Calls) / res.Seconds
	res.ClientCPUus = float64((cpu1 - cpu0).Microseconds()) / n
	res.ServerCPUus = float64(sticks1-sticks0) * 1e6 / clkTck / n
	res.P50us = h.quantile(0.50) / 1e3
	res.P99us = h.quantile(0.99) / 1e3
	runtime.GC() // don't charge this cell's garbage to the next
	return res, nil
}

// clkTck is USER_HZ, the unit of /proc/PID/stat: 100 on every Linux build
// in practice.
const clkTck = 100
