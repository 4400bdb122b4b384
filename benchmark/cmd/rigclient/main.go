// Command rigclient is the stress rig's load client; it runs inside a client container
// of docker-compose.yml, started by benchmark/cmd/rig, and is not meant to be run by hand.
//
// It waits until the server service's name resolves to -servers addresses, opens -conns
// connections spread evenly over them at no more than -dial-rate a second, checks that
// every connection answers correctly on a key of its own (SET, then GET it back), reports
// ready, waits for the driver's go, runs an open-loop load of -rate requests/s over all its
// connections for -duration, and writes its result. Its live state and result are files
// in -out (see package benchmark/rig). SIGTERM or SIGINT stops it at once.
//
// -probe-nofile prints the descriptor limit the container gets and exits; the driver uses
// it to size the rig.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"syscall"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
	"github.com/shoalkv/shoal/benchmark/rig"
	"github.com/shoalkv/shoal/internal/loadgen"
)

type options struct {
	server   string
	port     int
	servers  int
	clients  int
	total    int     // connections over all clients
	dialRate float64 // over all clients
	rate     float64 // over all clients
	duration time.Duration
	timeout  time.Duration
	workload string
	out      string
	id       string
	waitGo   time.Duration
}

func main() {
	o, probe, err := parseFlags(os.Args[1:])
	if err != nil {
		fmt.Fprintln(os.Stderr, "rigclient:", err)
		os.Exit(2)
	}
	if probe {
		var lim syscall.Rlimit
		if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
			fmt.Fprintln(os.Stderr, "rigclient:", err)
			os.Exit(1)
		}
		fmt.Println(lim.Cur)
		return
	}
	ctx, cancel := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer cancel()
	if err := run(ctx, o); err != nil {
		fmt.Fprintln(os.Stderr, "rigclient:", err)
		_ = rig.WriteJSON(o.out, o.id+".status", rig.Status{ID: o.id, Phase: rig.PhaseDone, Time: time.Now(), Error: err.Error()})
		os.Exit(1)
	}
}

func parseFlags(args []string) (options, bool, error) {
	fs := flag.NewFlagSet("rigclient", flag.ContinueOnError)
	var o options
	host, _ := os.Hostname()
	fs.StringVar(&o.server, "server", "server", "server service name (or address) to resolve")
	fs.IntVar(&o.port, "port", 6379, "server port")
	fs.IntVar(&o.servers, "servers", 1, "wait until -server resolves to this many addresses")
	fs.IntVar(&o.clients, "clients", 1, "client replicas sharing the load")
	fs.IntVar(&o.total, "conns", 1000, "connections over all clients; this client opens its share")
	fs.Float64Var(&o.dialRate, "dial-rate", 2000, "new connections per second over all clients, at most")
	fs.Float64Var(&o.rate, "rate", 1000, "open-loop requests per second over all clients' connections")
	fs.DurationVar(&o.duration, "duration", 10*time.Second, "load duration")
	fs.DurationVar(&o.timeout, "timeout", 30*time.Second, "dial timeout and longest wait for a reply")
	fs.StringVar(&o.workload, "t", "get:1,set:1", "commands with weights, as shoal-load -t")
	fs.StringVar(&o.out, "out", "/out", "directory shared with the driver")
	fs.StringVar(&o.id, "id", host, "this client's name in -out")
	fs.DurationVar(&o.waitGo, "wait-go", 10*time.Minute, "longest wait for the driver's go")
	probe := fs.Bool("probe-nofile", false, "print the descriptor limit and exit")
	if err := fs.Parse(args); err != nil {
		return o, false, err
	}
	switch {
	case *probe:
	case fs.NArg() > 0:
		return o, false, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	case o.servers < 1:
		return o, false, fmt.Errorf("-servers %d: want at least 1", o.servers)
	case o.clients < 1 || o.total < o.clients:
		return o, false, fmt.Errorf("-clients %d -conns %d: want at least one client and one connection per client", o.clients, o.total)
	case o.id == "":
		return o, false, errors.New("-id is empty and the hostname unknown")
	case o.rate <= 0:
		return o, false, fmt.Errorf("-rate %v: the rig's load is open loop; want a positive rate", o.rate)
	}
	return o, *probe, nil
}

// resolve waits until o.server names o.servers addresses and returns them sorted: compose
// starts the servers before the clients, but DNS may lag behind by a moment.
func resolve(ctx context.Context, o options) ([]string, error) {
	deadline := time.Now().Add(60 * time.Second)
	var ips []string
	for {
		var err error
		ips, err = net.DefaultResolver.LookupHost(ctx, o.server)
		if err == nil && len(ips) >= o.servers {
			break
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return nil, fmt.Errorf("%s resolves to %d addresses, want %d (last error %v)", o.server, len(ips), o.servers, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
	slices.Sort(ips)
	addrs := make([]string, len(ips))
	for i, ip := range ips {
		addrs[i] = net.JoinHostPort(ip, strconv.Itoa(o.port))
	}
	return addrs, nil
}

// claimSlot takes the first free slot 0..clients-1 by creating its file in -out
// exclusively: replicas of a compose service cannot otherwise tell which one they are.
func claimSlot(o options) (int, error) {
	for k := range o.clients {
		f, err := os.OpenFile(filepath.Join(o.out, fmt.Sprintf("slot-%d", k)), os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
		if errors.Is(err, os.ErrExist) {
			continue
		}
		if err != nil {
			return 0, err
		}
		fmt.Fprintln(f, o.id)
		return k, f.Close()
	}
	return 0, fmt.Errorf("all %d client slots in %s are taken", o.clients, o.out)
}

// share is slot k's part of n split over the clients.
func share(n, clients, k int) int {
	s := n / clients
	if k < n%clients {
		s++
	}
	return s
}

// keysPerSlot bounds one client's connections (loadgen allows 1<<20).
const keysPerSlot = 1 << 20

func run(ctx context.Context, o options) error {
	slot, err := claimSlot(o)
	if err != nil {
		return err
	}
	conns := share(o.total, o.clients, slot)
	frac := float64(conns) / float64(o.total)
	st := rig.Status{ID: o.id, Slot: slot, Phase: rig.PhaseResolve, Target: conns}
	publish := func() error {
		st.Time = time.Now()
		return rig.WriteJSON(o.out, o.id+".status", st)
	}
	if err := publish(); err != nil {
		return err
	}
	addrs, err := resolve(ctx, o)
	if err != nil {
		return err
	}
	mix, err := loadgen.ParseCommands(o.workload)
	if err != nil {
		return err
	}
	cfg := &loadgen.Config{
		Protocol: "resp", Addrs: addrs, Conns: conns, Pipeline: 1, Duration: o.duration,
		Rate: o.rate * frac, Mix: mix, Keyspace: 1, ValueSize: 3, Dist: "uniform", ZipfS: 1.01,
		Timeout: o.timeout, Seed: uint64(slot) + 1, DialRate: o.dialRate * frac, OwnKeys: true,
		// Slot k's connections own keys k*keysPerSlot and up: no two connections of the
		// rig share a key, whichever server replica they reach.
		KeyBase: uint64(slot) * keysPerSlot, ExportHistogram: true, LowMemory: true,
	}
	s, err := loadgen.NewSession(cfg)
	if err != nil {
		return err
	}
	defer s.Close()

	// The status goroutine owns st from here on; phase changes reach it by channel.
	phases := make(chan string, 4)
	stopped := make(chan struct{})
	statusErr := make(chan error, 1)
	go func() {
		defer close(stopped)
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		for {
			select {
			case p, ok := <-phases:
				if !ok {
					return
				}
				st.Phase = p
			case <-tick.C:
			}
			st.Connected, st.Failed = s.Connected()
			var h *hdrhistogram.Histogram
			st.Completed, h = s.Snapshot()
			if st.Phase == rig.PhaseLoad {
				enc, err := h.Encode(hdrhistogram.V2CompressedEncodingCookieBase)
				if err == nil {
					st.Histogram = string(enc)
				}
			}
			if err := publish(); err != nil {
				select {
				case statusErr <- err:
				default:
				}
			}
		}
	}()
	stopStatus := func() { close(phases); <-stopped }

	phases <- rig.PhaseDial
	began := time.Now()
	if err := s.Dial(ctx); err != nil {
		stopStatus()
		return err
	}
	phases <- rig.PhaseCheck
	s.Verify(ctx)
	connectSeconds := time.Since(began).Seconds()
	connected, _ := s.Connected()
	phases <- rig.PhaseReady
	if err := waitGo(ctx, o); err != nil {
		stopStatus()
		return err
	}
	phases <- rig.PhaseLoad
	rep, err := s.Load(ctx, nil)
	stopStatus()
	if err != nil {
		return err
	}
	select {
	case err := <-statusErr:
		return fmt.Errorf("writing status: %w", err)
	default:
	}
	res := rig.Result{ID: o.id, Slot: slot, Servers: addrs, Target: conns, Connected: connected,
		ConnectSeconds: connectSeconds, Report: rep}
	if err := rig.WriteJSON(o.out, o.id+".result", res); err != nil {
		return err
	}
	st.Phase = rig.PhaseDone
	st.Connected, st.Failed = s.Connected()
	st.Completed = rep.Requests
	st.Histogram = rep.Histogram // the whole load, so the driver's last interval is exact
	return publish()
}

// waitGo waits for the driver's go file.
func waitGo(ctx context.Context, o options) error {
	deadline := time.Now().Add(o.waitGo)
	for {
		if _, err := os.Stat(filepath.Join(o.out, rig.GoFile)); err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("no go from the driver within %v", o.waitGo)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}
