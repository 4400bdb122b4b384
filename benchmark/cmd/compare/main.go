package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/shoalkv/shoal/benchmark/internal/proc"
)

type options struct {
	rounds       int
	duration     time.Duration
	warmup       time.Duration
	pipelines    []int
	conns        []int
	ops          []string
	servers      []string
	rate         float64
	latencyConns int
	keyspace     int
	valueSize    int
	out          string
	profile      bool
	profileOnly  bool
	profiled     []string // servers -profile profiles: shoal, shoal-gnet
	clientCheck  bool
}

func main() {
	o, err := parseOptions(os.Args[1:])
	if err != nil {
		fmt.Fprintln(os.Stderr, "compare:", err)
		os.Exit(2)
	}
	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer cancel()
	if err := compare(ctx, o); err != nil {
		fmt.Fprintln(os.Stderr, "compare:", err)
		os.Exit(1)
	}
}

// compareOps are the workloads -ops accepts: GET and SET, and redis-benchmark's
// data-type commands, each on one key (mylist, myset, myhash, myzset) as it sends them.
var compareOps = []string{"get", "set", "lpush", "rpush", "lpop", "rpop", "sadd", "spop", "hset", "zadd", "zpopmin"}

func parseOptions(args []string) (*options, error) {
	fs := flag.NewFlagSet("compare", flag.ContinueOnError)
	o := &options{}
	fs.IntVar(&o.rounds, "rounds", 1, "rounds over all workloads and servers; figures are medians")
	fs.DurationVar(&o.duration, "duration", 2*time.Second, "measured time of each run")
	fs.DurationVar(&o.warmup, "warmup", 500*time.Millisecond, "unmeasured load before each run")
	pipelines := fs.String("pipelines", "1,16,128", "closed-loop pipeline depths")
	conns := fs.String("conns", "50,1000", "closed-loop connection counts")
	ops := fs.String("ops", "get,set", "commands, one workload each, run in this order (so lpush before lpop): "+strings.Join(compareOps, ", ")+"; the data-type ones need -servers shoal,redis")
	servers := fs.String("servers", "shoal,redis,gnet,net", "servers to compare (shoal, shoal-gnet, redis, gnet, net)")
	profiled := fs.String("profile-servers", "shoal", "servers -profile profiles (shoal, shoal-gnet)")
	fs.Float64Var(&o.rate, "rate", 20000, "open-loop rate (requests/s) for the latency runs; below every server's capacity")
	fs.IntVar(&o.latencyConns, "latency-conns", 50, "connections of the open-loop latency runs")
	fs.IntVar(&o.keyspace, "keyspace", 100000, "keys loaded before the runs and used by them")
	fs.IntVar(&o.valueSize, "value-size", 3, "value size in bytes (redis-benchmark's default)")
	fs.StringVar(&o.out, "out", "benchmark/results", "output directory")
	fs.BoolVar(&o.profile, "profile", false, "after the rounds, profile shoal on GET c=50 P=16 (--cpuprofile if the binary has it, else perf record)")
	fs.BoolVar(&o.profileOnly, "profile-only", false, "only profile shoal (as -profile), without the comparison rounds")
	fs.BoolVar(&o.clientCheck, "client-check", false, "instead of comparing servers, compare shoal-load with redis-benchmark as clients of redis-server (-c 50 -P 16)")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	var err error
	if o.pipelines, err = parseInts("-pipelines", *pipelines, 1, 1<<16); err != nil {
		return nil, err
	}
	if o.conns, err = parseInts("-conns", *conns, 1, 1<<20); err != nil {
		return nil, err
	}
	for _, op := range strings.Split(*ops, ",") {
		if !slices.Contains(compareOps, op) {
			return nil, fmt.Errorf("-ops: %q is not one of %s", op, strings.Join(compareOps, ", "))
		}
		o.ops = append(o.ops, op)
	}
	for _, s := range strings.Split(*servers, ",") {
		switch s {
		case "shoal", "shoal-gnet", "redis", "gnet", "net":
			o.servers = append(o.servers, s)
		default:
			return nil, fmt.Errorf("-servers: unknown server %q (want shoal, shoal-gnet, redis, gnet, net)", s)
		}
	}
	for _, s := range strings.Split(*profiled, ",") {
		if s != "shoal" && s != "shoal-gnet" {
			return nil, fmt.Errorf("-profile-servers: %q is not shoal or shoal-gnet", s)
		}
		o.profiled = append(o.profiled, s)
	}
	switch {
	case o.rounds < 1 || o.rounds > 100:
		return nil, fmt.Errorf("-rounds %d: want 1..100", o.rounds)
	case o.duration < 100*time.Millisecond:
		return nil, fmt.Errorf("-duration %v: want at least 100ms", o.duration)
	case o.rate <= 0:
		return nil, fmt.Errorf("-rate %v: must be positive", o.rate)
	case o.keyspace < 1:
		return nil, fmt.Errorf("-keyspace %d: must be positive", o.keyspace)
	}
	return o, nil
}

func parseInts(name, s string, lo, hi int) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < lo || n > hi {
			return nil, fmt.Errorf("%s: %q is not an integer in %d..%d", name, f, lo, hi)
		}
		out = append(out, n)
	}
	return out, nil
}

// binaries are the programs compare builds, in a temporary directory.
type binaries struct {
	dir, load, baseline, shoal string
	shoalMissing               string // why shoal is not compared, if it is not
}

func build(root string) (*binaries, error) {
	dir, err := os.MkdirTemp("", "shoal-compare-")
	if err != nil {
		return nil, err
	}
	b := &binaries{dir: dir, load: filepath.Join(dir, "shoal-load"), baseline: filepath.Join(dir, "baseline"), shoal: filepath.Join(dir, "shoal")}
	if err := proc.GoBuild(root, "./cmd/shoal-load", b.load); err != nil {
		return nil, err
	}
	if err := proc.GoBuild(root, "./benchmark/cmd/baseline", b.baseline); err != nil {
		return nil, err
	}
	if _, err := os.Stat(filepath.Join(root, "cmd", "shoal", "main.go")); err != nil {
		b.shoalMissing = "./cmd/shoal does not exist yet"
	} else if err := proc.GoBuild(root, "./cmd/shoal", b.shoal); err != nil {
		b.shoalMissing = "./cmd/shoal does not build: " + firstLine(err.Error())
	}
	return b, nil
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return s
}

func specs(b *binaries) map[string]proc.Spec {
	return map[string]proc.Spec{
		"shoal": {Name: "shoal", Desc: "shoal (./cmd/shoal, native epoll loops, GOMAXPROCS loops)", Argv: func(p int) []string {
			return proc.ShoalArgv(b.shoal, p)
		}},
		"shoal-gnet": {Name: "shoal-gnet", Desc: "shoal (./cmd/shoal --engine gnet: the same kv handler on gnet v2.10.0, GOMAXPROCS loops)", Argv: func(p int) []string {
			return proc.ShoalArgv(b.shoal, p, "--engine", "gnet")
		}},
		"redis": {Name: "redis", Desc: "redis-server 7 (single-threaded, no persistence)", Argv: func(p int) []string {
			return proc.RedisArgv("redis-server", p)
		}},
		"gnet": {Name: "gnet", Desc: "gnet v2.10.0, one loop per CPU, one Write per OnTraffic (benchmark/baseline)", Argv: func(p int) []string {
			return []string{b.baseline, "-engine", "gnet", "-addr", fmt.Sprintf("127.0.0.1:%d", p)}
		}},
		"net": {Name: "net", Desc: "goroutine per connection, bufio flushed when input drains (benchmark/baseline)", Argv: func(p int) []string {
			return []string{b.baseline, "-engine", "net", "-addr", fmt.Sprintf("127.0.0.1:%d", p)}
		}},
	}
}
