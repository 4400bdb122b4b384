// Command rig is the 100k-connection stress rig: it drives benchmark/rig/docker-compose.yml end to end
// and reports what the server holds and how fast it answers.
//
//	go run ./benchmark/cmd/rig -conns 100000 -peer redis -out benchmark/results/rig
//
// It builds shoal and the rig client as static binaries, builds the FROM-scratch images,
// starts the server replicas, measures their idle RSS, starts the clients, which ramp up
// their connections at -dial-rate, check every connection on a key of its own, and on
// the driver's go run an open-loop load of -rate requests/s over all connections for
// -duration. A progress line follows ramp and load. The report (JSON with -json, and
// report.json, report.md and report.png in -out) has the connections, errors by kind,
// connect time, the servers' RSS per connection, throughput and latency percentiles from
// the exact merge of every client's HdrHistogram. Everything the rig created (containers,
// network, images) is removed at the end, also after a failure or Ctrl-C.
//
// One process can hold only as many connections as its descriptor limit allows, and a
// container cannot raise the limit it gets from the docker daemon. -servers and -clients
// default to as many processes as that limit requires, each server its own keyspace
// behind the compose service name; every connection works on a key of its own.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/shoalkv/shoal/benchmark/internal/machine"
)

type options struct {
	conns    int
	duration time.Duration
	rate     float64
	dialRate float64
	servers  int
	clients  int
	server   string
	peer     string
	json     string
	out      string
	project  string
}

// reservedFDs is what a process keeps beside its connections (listener, logs, runtime).
const reservedFDs = 100

// minRequestsPerConn is what every connection must carry at least, on average, so that
// the load is not carried by a few of them.
const minRequestsPerConn = 2

func main() {
	code, err := mainErr(os.Args[1:], os.Stdout, os.Stderr)
	if err != nil {
		fmt.Fprintln(os.Stderr, "rig:", err)
	}
	os.Exit(code)
}

func parseFlags(args []string, stderr io.Writer) (options, error) {
	fs := flag.NewFlagSet("rig", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var o options
	fs.IntVar(&o.conns, "conns", 100000, "connections to hold, over all clients")
	fs.DurationVar(&o.duration, "duration", 30*time.Second, "open-loop load duration, once all connections are up")
	fs.Float64Var(&o.rate, "rate", 0, "open-loop requests/s over all connections (0: a request every 10 s per connection, or 2 per connection over -duration if that is more)")
	fs.Float64Var(&o.dialRate, "dial-rate", 5000, "new connections per second over all clients, at most")
	fs.IntVar(&o.servers, "servers", 0, "server processes (0: as many as the containers' descriptor limit needs)")
	fs.IntVar(&o.clients, "clients", 0, "client containers (0: as many as the descriptor limit needs)")
	fs.StringVar(&o.server, "server", "shoal", "server under test: shoal or redis")
	fs.StringVar(&o.peer, "peer", "", "run the same rig against this server too, side by side (redis); empty: none")
	fs.StringVar(&o.json, "json", "", "also write the JSON report to `file`")
	fs.StringVar(&o.out, "out", "", "directory for report.json, report.md and report.png (empty: none)")
	fs.StringVar(&o.project, "project", fmt.Sprintf("shoalrig-%d", os.Getpid()), "compose project name; everything the rig creates carries it")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if fs.NArg() > 0 {
		return o, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	if o.rate == 0 {
		o.rate = max(float64(o.conns)/10, minRequestsPerConn*float64(o.conns)/o.duration.Seconds())
	}
	return o, o.validate()
}

func (o *options) validate() error {
	switch {
	case o.conns < 1 || o.conns > 1_000_000:
		return fmt.Errorf("-conns %d: want 1 to 1000000", o.conns)
	case o.duration < time.Second || o.duration > time.Hour:
		return fmt.Errorf("-duration %v: want 1s to 1h", o.duration)
	case o.rate < 0:
		return fmt.Errorf("-rate %v: must be positive", o.rate)
	case o.dialRate <= 0:
		return fmt.Errorf("-dial-rate %v: must be positive", o.dialRate)
	case o.servers < 0 || o.servers > 64:
		return fmt.Errorf("-servers %d: want 0 (automatic) to 64", o.servers)
	case o.clients < 0 || o.clients > 64:
		return fmt.Errorf("-clients %d: want 0 (automatic) to 64", o.clients)
	case o.server != "shoal" && o.server != "redis":
		return fmt.Errorf("-server %q: want shoal or redis", o.server)
	case o.peer != "" && o.peer != "shoal" && o.peer != "redis" || o.peer == o.server:
		return fmt.Errorf("-peer %q: want the other server (shoal or redis) or nothing", o.peer)
	case !validProject(o.project):
		return fmt.Errorf("-project %q: want 1 to 40 lower-case letters, digits or '-', starting with a letter", o.project)
	}
	if perConn := o.rate * o.duration.Seconds() / float64(o.conns); perConn < minRequestsPerConn {
		return fmt.Errorf("-rate %v over -duration %v is %.2f requests per connection for %d connections: every connection must carry at least %d; raise -rate or -duration",
			o.rate, o.duration, perConn, o.conns, minRequestsPerConn)
	}
	// A connection waiting longer than the client's 30 s reply timeout between requests
	// would be counted as a timeout.
	if interval := float64(o.conns) / o.rate; interval > 20 {
		return fmt.Errorf("-rate %v is one request every %.0f s per connection; want at most 20 s: raise -rate", o.rate, interval)
	}
	return nil
}

func validProject(s string) bool {
	if len(s) < 1 || len(s) > 40 || s[0] < 'a' || s[0] > 'z' {
		return false
	}
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
			return false
		}
	}
	return true
}

// makePlan sizes the rig for the descriptor limit nofile that each container gets.
func makePlan(o options, server string, nofile int) (plan, error) {
	perProcess := nofile - reservedFDs
	if perProcess < 1 {
		return plan{}, fmt.Errorf("the containers' descriptor limit %d leaves no room for connections", nofile)
	}
	p := plan{server: server, conns: o.conns, servers: o.servers, clients: o.clients, rate: o.rate,
		dialRate: o.dialRate, duration: o.duration, nofile: nofile}
	need := (o.conns + perProcess - 1) / perProcess
	if p.servers == 0 {
		p.servers = need
	}
	if p.clients == 0 {
		p.clients = need
	}
	if per := (o.conns + p.servers - 1) / p.servers; per > perProcess {
		return plan{}, fmt.Errorf("-servers %d: %d connections each, but a container's descriptor limit %d holds at most %d", p.servers, per, nofile, perProcess)
	}
	if per := (o.conns + p.clients - 1) / p.clients; per > perProcess {
		return plan{}, fmt.Errorf("-clients %d: %d connections each, but a container's descriptor limit %d holds at most %d", p.clients, per, nofile, perProcess)
	}
	if p.clients > o.conns {
		return plan{}, fmt.Errorf("-clients %d is more than -conns %d", p.clients, o.conns)
	}
	if p.servers == 1 {
		p.mode = "single"
		p.modeReason = fmt.Sprintf("one %s process holds all %d connections within the containers' descriptor limit of %d.", server, o.conns, nofile)
	} else {
		p.mode = "replicas"
		p.modeReason = fmt.Sprintf("%d replicas of the server service behind compose's DNS, each a process with its own keyspace; "+
			"each client spreads its connections evenly over all their addresses and every connection works on a key of its own. "+
			"Why: containers get a descriptor limit of %d from the docker daemon and cannot raise it, so one process holds at most ~%d connections "+
			"(on a host whose daemon allows ~1M, -servers 1 runs one process).", p.servers, nofile, perProcess)
	}
	return p, nil
}

func mainErr(args []string, stdout, stderr io.Writer) (int, error) {
	o, err := parseFlags(args, stderr)
	if err == flag.ErrHelp {
		return 0, nil
	}
	if err != nil {
		return 2, err
	}
	if err := dockerUsable(); err != nil {
		return 1, fmt.Errorf("docker is not usable here: %w", err)
	}
	compose, err := findCompose()
	if err != nil {
		return 1, err
	}
	root, err := findRoot()
	if err != nil {
		return 1, err
	}
	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer cancel()

	work, err := os.MkdirTemp("", o.project+"-")
	if err != nil {
		return 1, err
	}
	defer os.RemoveAll(work)
	buildDir := filepath.Join(work, "context")
	fmt.Fprintf(stderr, "rig: project %s; building static binaries\n", o.project)
	if err := buildContext(ctx, root, buildDir, o.server == "redis" || o.peer == "redis"); err != nil {
		return 1, err
	}
	servers := []string{o.server}
	if o.peer != "" {
		servers = append(servers, o.peer)
	}
	tty := isTerminal(stderr)
	var reports []*Report
	nofile := 0 // probed by the first run, reused by the next
	for _, server := range servers {
		out := filepath.Join(work, "out-"+server)
		if err := os.MkdirAll(out, 0o777); err != nil {
			return 1, err
		}
		d := &docker{project: o.project, composeFile: filepath.Join(root, "benchmark", "rig", "docker-compose.yml"), compose: compose}
		rep, err := runOne(ctx, d, o, server, buildDir, out, stderr, tty, &nofile)
		if err != nil {
			if ctx.Err() != nil {
				return 130, fmt.Errorf("%w; everything of project %s was removed", errInterrupted, o.project)
			}
			return 1, err
		}
		reports = append(reports, rep)
	}
	rep := reports[0]
	if len(reports) > 1 {
		rep.Peer = reports[1]
	}
	rep.Command = "go run ./benchmark/cmd/rig " + strings.Join(args, " ")
	rep.Machine = machine.Describe().String()
	if err := writeReports(o, rep); err != nil {
		return 1, err
	}
	printSummary(stdout, rep)
	if rep.Connected != int64(rep.Target) || rep.Errors != 0 || rep.Peer != nil && (rep.Peer.Connected != int64(rep.Peer.Target) || rep.Peer.Errors != 0) {
		return 1, errors.New("not every connection was held without errors; see the report")
	}
	return 0, nil
}

// runOne runs the rig against one server and always tears it down.
func runOne(ctx context.Context, d *docker, o options, server, buildDir, out string, stderr io.Writer, tty bool, nofile *int) (rep *Report, err error) {
	defer func() {
		fmt.Fprintf(stderr, "rig [%s] tearing down project %s\n", server, d.project)
		if terr := d.teardown(); terr != nil {
			err = errors.Join(err, fmt.Errorf("teardown: %w", terr))
		}
	}()
	// The variables before the plan is known build the images and run the probe.
	d.env = rigEnv(d.project, server, buildDir, out, plan{servers: 1, clients: 1, conns: 1, rate: 1, dialRate: 1, duration: time.Second})
	if _, err := d.composeRun(ctx, "build", "-q"); err != nil {
		return nil, err
	}
	if *nofile == 0 {
		if *nofile, err = probeNofile(ctx, d.project); err != nil {
			return nil, err
		}
	}
	p, err := makePlan(o, server, *nofile)
	if err != nil {
		return nil, err
	}
	d.env = rigEnv(d.project, server, buildDir, out, p)
	return runRig(ctx, d, p, out, stderr, tty)
}

func rigEnv(project, server, buildDir, out string, p plan) []string {
	return []string{
		"RIG_PROJECT=" + project, "RIG_SERVER=" + server, "RIG_CONTEXT=" + buildDir, "RIG_OUT=" + out,
		"RIG_SERVERS=" + strconv.Itoa(p.servers), "RIG_CLIENTS=" + strconv.Itoa(p.clients),
		"RIG_CONNS=" + strconv.Itoa(p.conns), "RIG_RATE=" + strconv.FormatFloat(p.rate, 'f', -1, 64),
		"RIG_DIAL_RATE=" + strconv.FormatFloat(p.dialRate, 'f', -1, 64), "RIG_DURATION=" + p.duration.String(),
	}
}

// probeNofile runs the client image once to read the descriptor limit containers get.
func probeNofile(ctx context.Context, project string) (int, error) {
	out, err := run(ctx, nil, "docker", "run", "--rm", "--network", "none", "--label", "shoal.rig="+project,
		project+"-client:rig", "-probe-nofile")
	if err != nil {
		return 0, err
	}
	n, err := strconv.Atoi(strings.TrimSpace(out))
	if err != nil {
		return 0, fmt.Errorf("descriptor limit probe printed %q", out)
	}
	return n, nil
}

func writeReports(o options, rep *Report) error {
	if o.json != "" {
		if err := writeJSON(o.json, rep); err != nil {
			return err
		}
	}
	if o.out == "" {
		return nil
	}
	if err := os.MkdirAll(o.out, 0o755); err != nil {
		return err
	}
	if err := writeJSON(filepath.Join(o.out, "report.json"), rep); err != nil {
		return err
	}
	if err := writeChart(filepath.Join(o.out, "report.png"), rep); err != nil {
		return err
	}
	f, err := os.Create(filepath.Join(o.out, "report.md"))
	if err != nil {
		return err
	}
	if err := writeMarkdown(f, rep, "report.png"); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func printSummary(w io.Writer, rep *Report) {
	for x := rep; x != nil; x = x.Peer {
		l := x.LatencyUs
		fmt.Fprintf(w, "%s: %d/%d connected, %d errors, connect %.1fs, %d servers × %d clients (%s); server RSS %s MB peak, %.0f B/conn (%.0f B/conn idle); %s req/s; p50 %s p99 %s p99.9 %s max %s\n",
			serverName(x.Server), x.Connected, x.Target, x.Errors, x.ConnectSeconds, x.Servers, x.Clients, x.Mode,
			mb(x.ServerRSSBytes), x.ServerRSSBytesPerConn, x.ServerRSSBytesPerIdleConn, strconv.FormatFloat(x.ThroughputRPS, 'f', 0, 64),
			fmtUs(l.P50), fmtUs(l.P99), fmtUs(l.P999), fmtUs(l.Max))
		if x.Peer == nil {
			break
		}
	}
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	_, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS)
	return err == nil
}
