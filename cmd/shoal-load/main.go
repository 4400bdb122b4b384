package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/pprof"
	"syscall"
	"time"

	"github.com/shoalkv/shoal/internal/loadgen"
)

func main() {
	code, err := mainErr(os.Args[1:], os.Stdout, os.Stderr)
	if err != nil {
		fmt.Fprintln(os.Stderr, "shoal-load:", err)
	}
	os.Exit(code)
}

// mainErr parses args, runs, and writes the report to stdout; exit code 2 is a usage
// error, 1 a failed run.
func mainErr(args []string, stdout, stderr io.Writer) (int, error) {
	cfg, asJSON, err := parseFlags(args, stderr)
	if err == flag.ErrHelp {
		return 0, nil
	}
	if err != nil {
		return 2, err
	}
	if cpuProfile != "" {
		f, err := os.Create(cpuProfile)
		if err != nil {
			return 2, err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return 2, err
		}
		defer pprof.StopCPUProfile()
	}
	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer cancel()
	rep, err := loadgen.Run(ctx, cfg, stderr)
	if err != nil {
		return 1, err
	}
	if asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		err = enc.Encode(rep)
	} else {
		err = rep.WriteTable(stdout)
	}
	return 0, err
}

// cpuProfile is the -cpuprofile file; empty for none.
var cpuProfile string

func parseFlags(args []string, stderr io.Writer) (*loadgen.Config, bool, error) {
	fs := flag.NewFlagSet("shoal-load", flag.ContinueOnError)
	fs.SetOutput(stderr)
	cfg := &loadgen.Config{}
	fs.StringVar(&cfg.Protocol, "proto", "resp", "wire protocol: resp, http (shoal --http-port) or frame (shoal --frame-port; no incr)")
	fs.StringVar(&cfg.Addr, "addr", "127.0.0.1:6379", "server `host:port`")
	fs.IntVar(&cfg.Conns, "c", 50, "connections")
	fs.IntVar(&cfg.Pipeline, "P", 1, "closed loop: requests in flight per connection, written in one batch")
	fs.Int64Var(&cfg.Requests, "n", 0, "measured requests (after warmup); 0 = run for -d")
	fs.DurationVar(&cfg.Duration, "d", 10*time.Second, "measured duration when -n is 0")
	fs.DurationVar(&cfg.Warmup, "warmup", 0, "load before measuring starts, not counted")
	fs.Float64Var(&cfg.Rate, "rate", 0, "open loop: requests/s across all connections; 0 = closed loop")
	fs.BoolVar(&cfg.StrictSchedule, "strict-schedule", false, "open loop: time every request from its due time, even when only the client's timer (~1 ms Go sleep granularity) made it late")
	commands := fs.String("t", "get", "commands with optional weights (get:9,set:1): get, set, ping, incr, and redis-benchmark's lpush, rpush, lpop, rpop, sadd, spop, hset, zadd, zpopmin (RESP only)")
	ratio := fs.String("ratio", "", "GET:SET mix, e.g. 9:1 (overrides -t)")
	fs.Uint64Var(&cfg.Keyspace, "keyspace", 100000, "keys key:000000000000 .. key:<keyspace-1>")
	fs.IntVar(&cfg.ValueSize, "value-size", 3, "SET value size in bytes")
	fs.StringVar(&cfg.Dist, "dist", "uniform", "key distribution: uniform or zipf")
	fs.Float64Var(&cfg.ZipfS, "zipf-s", 1.01, "Zipf exponent s (> 1)")
	src := fs.String("src", "", "comma-separated local IPs to spread connections over (e.g. 127.0.0.1,127.0.0.2)")
	fs.DurationVar(&cfg.Timeout, "timeout", 10*time.Second, "dial timeout and longest wait for a reply")
	fs.DurationVar(&cfg.Progress, "progress", time.Second, "progress line period; 0 prints only the measuring/done markers")
	fs.Uint64Var(&cfg.Seed, "seed", 1, "random seed for keys and the command mix")
	asJSON := fs.Bool("json", false, "print the report as JSON")
	fs.StringVar(&cpuProfile, "cpuprofile", "", "write a pprof CPU profile of shoal-load itself to `file`")
	if err := fs.Parse(args); err != nil {
		return nil, false, err
	}
	if fs.NArg() > 0 {
		return nil, false, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	var err error
	if *ratio != "" {
		cfg.Mix, err = loadgen.ParseRatio(*ratio)
	} else {
		cfg.Mix, err = loadgen.ParseCommands(*commands)
	}
	if err != nil {
		return nil, false, err
	}
	if cfg.Sources, err = loadgen.ParseSources(*src); err != nil {
		return nil, false, err
	}
	return cfg, *asJSON, cfg.Validate()
}
