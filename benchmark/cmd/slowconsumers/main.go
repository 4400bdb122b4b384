package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/shoalkv/shoal/internal/slowconsumer"
)

type options struct {
	shoal, redis string
	ns           []int
	size         int
	settle       time.Duration
	rounds       int
	out          string
	warmup       bool
}

func main() {
	o, err := parseOptions(os.Args[1:])
	if err != nil {
		fmt.Fprintln(os.Stderr, "slowconsumers:", err)
		os.Exit(2)
	}
	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer cancel()
	if err := run(ctx, o); err != nil {
		fmt.Fprintln(os.Stderr, "slowconsumers:", err)
		os.Exit(1)
	}
}

func parseOptions(args []string) (options, error) {
	fs := flag.NewFlagSet("slowconsumers", flag.ContinueOnError)
	var o options
	var ns string
	fs.StringVar(&o.shoal, "shoal", "", "shoal binary (default: build ./cmd/shoal into a temporary directory)")
	fs.StringVar(&o.redis, "redis", "redis-server", "redis-server binary")
	fs.StringVar(&ns, "n", "1,4,16", "comma-separated subscriber counts")
	fs.IntVar(&o.size, "size", slowconsumer.DefaultMessageSize, "bytes of each published message")
	fs.DurationVar(&o.settle, "settle", slowconsumer.DefaultSettle, "wait after closing the subscribers before reading RSS again")
	fs.IntVar(&o.rounds, "rounds", 1, "rounds over every N and server")
	fs.StringVar(&o.out, "out", "", "directory for results.md and results.json (default: print only)")
	fs.BoolVar(&o.warmup, "warmup", true, "run one subscriber through each fresh server first, unmeasured, so that a process's one-time costs (code pages faulted in) are not counted as a slow consumer's")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	for f := range strings.SplitSeq(ns, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			return o, fmt.Errorf("-n %q: %q is not a subscriber count of 1 or more", ns, f)
		}
		o.ns = append(o.ns, n)
	}
	if o.size < 1 || o.rounds < 1 || o.settle <= 0 {
		return o, fmt.Errorf("-size %d, -rounds %d and -settle %v must be positive", o.size, o.rounds, o.settle)
	}
	return o, nil
}

func run(ctx context.Context, o options) error {
	tmp, err := os.MkdirTemp("", "slowconsumers")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	if o.shoal == "" {
		if o.shoal, err = buildShoal(tmp); err != nil {
			return err
		}
	}
	if o.redis, err = exec.LookPath(o.redis); err != nil {
		return fmt.Errorf("-redis: %w", err)
	}
	rep := report{Started: time.Now(), Load: loadAverage(), Settle: o.settle, MessageSize: o.size, Warmup: o.warmup}
	if out, err := exec.Command(o.redis, "--version").Output(); err == nil {
		rep.RedisVersion = strings.TrimSpace(string(out))
	}
	servers := []server{shoalServer(o.shoal), redisServer(o.redis)}
	runs := 0
	for round := 1; round <= o.rounds; round++ {
		for _, n := range o.ns {
			for i := range servers {
				s := servers[(i+runs)%len(servers)] // alternate which server goes first
				row := measure(ctx, s, n, o, tmp)
				row.Round = round
				fmt.Fprintf(os.Stderr, "%s N=%d: %s\n", s.name, n, row.summary())
				rep.Rows = append(rep.Rows, row)
				if ctx.Err() != nil {
					return ctx.Err()
				}
			}
			runs++
		}
	}
	md := rep.markdown(o.rounds > 1)
	fmt.Print(md)
	if o.out == "" {
		return nil
	}
	return rep.write(o.out, md)
}

// measure starts s, runs one measurement with n subscribers and stops s.
// A failure is recorded in the row, so that the other runs still happen.
func measure(ctx context.Context, s server, n int, o options, tmp string) row {
	r := row{Server: s.name, N: n}
	dir, err := os.MkdirTemp(tmp, s.name)
	if err != nil {
		r.Err = err.Error()
		return r
	}
	srv, err := start(s, dir)
	if err != nil {
		r.Err = err.Error()
		return r
	}
	defer srv.Stop()
	// Generous: publishing takes seconds even where the server misbehaves.
	ctx, cancel := context.WithTimeout(ctx, 2*o.settle+4*time.Minute)
	defer cancel()
	if o.warmup {
		if _, err := slowconsumer.Run(ctx, slowconsumer.Options{
			Addr: srv.Addr, PID: srv.PID(), Subscribers: 1, MessageSize: o.size, Settle: o.settle}); err != nil {
			r.Err = "warm-up: " + err.Error()
			return r
		}
	}
	r.Result, err = slowconsumer.Run(ctx, slowconsumer.Options{
		Addr: srv.Addr, PID: srv.PID(), Subscribers: n, MessageSize: o.size, Settle: o.settle})
	if err != nil {
		r.Err = err.Error()
		if errors.Is(err, context.DeadlineExceeded) {
			r.Err += "; server output: " + tail(srv.Log.String(), 300)
		}
	}
	return r
}

func tail(s string, n int) string {
	if len(s) > n {
		return "…" + s[len(s)-n:]
	}
	return s
}

// loadAverage returns the output of uptime, or /proc/loadavg without it.
func loadAverage() string {
	if out, err := exec.Command("uptime").Output(); err == nil {
		return strings.TrimSpace(string(out))
	}
	b, _ := os.ReadFile("/proc/loadavg")
	return strings.TrimSpace(string(b))
}
