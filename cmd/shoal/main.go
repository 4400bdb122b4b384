// Command shoal is a Redis-compatible in-memory key-value server built on
// Shoal's event loops.
//
// Every flag can also be given as an environment variable named SHOAL_ plus
// the flag name in upper case with dashes as underscores (--maxmemory-policy
// is SHOAL_MAXMEMORY_POLICY). An explicit flag wins over the environment,
// which wins over the default.
//
// SIGTERM and SIGINT stop accepting, answer every request already received,
// flush, and exit 0 (within --shutdown-timeout, default 30s).
//
// Limits: --maxclients (default 10000) refuses further connections with
// "-ERR max number of clients reached"; like Redis, it is lowered (and a
// warning logged) to the descriptor limit minus 32 when that is smaller; a client whose unparsed input passes
// --max-query-buffer (default 64mb) is closed, as is one whose pending
// replies pass 64 MiB because it stopped reading; a bulk argument over
// 512 MiB or more than INT_MAX arguments is a protocol error. Before AUTH,
// with --requirepass, Redis's tighter limits apply (10 arguments, 16 KiB
// bulks). --pprof-addr serves net/http/pprof for profiling.
//
// --http-port and --frame-port (0, off, by default) serve the same keyspace
// over HTTP/1.1 (GET/PUT/DELETE /kv/{key}, POST /kv/{key}/incr, /healthz,
// /metrics) and proto/frame's binary frames, on the same event loops and
// --bind address; --requirepass and protected mode apply to them too.
//
// --engine gnet serves the same handler on gnet v2 instead of Shoal's own
// event loops (--engine native, the default); eventloop/gnetengine's
// documentation lists what that engine does differently.
//
// Persistence: --appendonly yes logs every write to --appendfilename in
// --dir and replays it at startup, before the port opens; --appendfsync
// always acknowledges a write only once it is on disk (see package aof).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/shoalkv/shoal/aof"
	"github.com/shoalkv/shoal/eventloop"
	"github.com/shoalkv/shoal/eventloop/gnetengine"
	"github.com/shoalkv/shoal/kv"
	"github.com/shoalkv/shoal/proto/frame"
	"github.com/shoalkv/shoal/server"
	"github.com/shoalkv/shoal/store"
)

// config is the parsed command line.
type config struct {
	port            int
	httpPort        int // 0: no HTTP front
	framePort       int // 0: no frame front
	bind            string
	requirePass     string
	protectedMode   bool
	maxClients      int
	maxMemory       int64
	policy          store.Policy
	loops           int
	balancer        string
	engine          string
	idleTimeout     time.Duration
	logLevel        slog.Level
	logLevelName    string
	maxQueryBuffer  int
	shutdownTimeout time.Duration
	pprofAddr       string
	appendOnly      bool
	appendFsync     aof.Fsync
	dir             string
	appendFilename  string
	loadTruncated   bool
}

func main() {
	cfg, err := parseConfig(os.Args[1:], os.Getenv)
	if err != nil {
		fmt.Fprintln(os.Stderr, "shoal:", err)
		os.Exit(2)
	}
	if err := run(cfg); err != nil {
		slog.Error("shoal stopped", "err", err)
		os.Exit(1)
	}
}

// parseConfig reads flags from args with defaults taken from the SHOAL_*
// environment variables (so explicit flags win).
func parseConfig(args []string, getenv func(string) string) (config, error) {
	fs := flag.NewFlagSet("shoal", flag.ContinueOnError)
	env := func(name, def string) string {
		if v := getenv("SHOAL_" + strings.ToUpper(strings.ReplaceAll(name, "-", "_"))); v != "" {
			return v
		}
		return def
	}
	port := fs.String("port", env("port", "6379"), "TCP port to listen on")
	httpPort := fs.String("http-port", env("http-port", "0"), "TCP port of the HTTP front on --bind (0: off)")
	framePort := fs.String("frame-port", env("frame-port", "0"), "TCP port of the binary frame front on --bind (0: off)")
	bind := fs.String("bind", env("bind", "127.0.0.1"), "address to bind")
	requirePass := fs.String("requirepass", env("requirepass", ""), "password clients must AUTH with (empty: none)")
	protected := fs.String("protected-mode", env("protected-mode", "yes"), "yes: without a password, refuse clients from other hosts (as Redis)")
	maxClients := fs.String("maxclients", env("maxclients", "10000"), "maximum simultaneous clients")
	maxMemory := fs.String("maxmemory", env("maxmemory", "0"), "memory limit for data, e.g. 100mb, 1gb (0: none)")
	policy := fs.String("maxmemory-policy", env("maxmemory-policy", "noeviction"), "eviction policy: noeviction, allkeys-random, allkeys-lru, volatile-lru, volatile-ttl")
	loops := fs.String("loops", env("loops", "0"), "event loops (0: GOMAXPROCS)")
	balancer := fs.String("balancer", env("balancer", "loadaware"), "connection balancer: roundrobin, leastconn, loadaware")
	engine := fs.String("engine", env("engine", "native"), "event-loop engine: native or gnet")
	idle := fs.String("idle-timeout", env("idle-timeout", "0"), "close clients idle this long, e.g. 300s (0: never)")
	logLevel := fs.String("loglevel", env("loglevel", "notice"), "debug, verbose, notice, warning or nothing")
	maxQuery := fs.String("max-query-buffer", env("max-query-buffer", "64mb"), "close a client whose unparsed input exceeds this")
	shutdown := fs.String("shutdown-timeout", env("shutdown-timeout", "30s"), "how long SIGTERM waits for replies to drain")
	pprofAddr := fs.String("pprof-addr", env("pprof-addr", ""), "serve net/http/pprof on this address, e.g. 127.0.0.1:6060 (empty: off)")
	appendOnly := fs.String("appendonly", env("appendonly", "no"), "yes: log every write to the append-only file and load it at startup")
	appendFsync := fs.String("appendfsync", env("appendfsync", "everysec"), "always (reply after fdatasync, grouped per batch), everysec or no")
	dir := fs.String("dir", env("dir", "."), "working directory; the append-only file is created in it")
	appendFilename := fs.String("appendfilename", env("appendfilename", "appendonly.aof"), "name of the append-only file, in --dir")
	loadTruncated := fs.String("aof-load-truncated", env("aof-load-truncated", "yes"), "yes: a truncated last command in the append-only file is cut off at load")
	if err := fs.Parse(args); err != nil {
		return config{}, err
	}
	if fs.NArg() > 0 {
		return config{}, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	var c config
	var err error
	if c.port, err = strconv.Atoi(*port); err != nil || c.port < 0 || c.port > 65535 {
		return c, fmt.Errorf("--port %q: want 0..65535", *port)
	}
	for _, p := range []struct {
		name string
		val  string
		dst  *int
	}{{"http-port", *httpPort, &c.httpPort}, {"frame-port", *framePort, &c.framePort}} {
		if *p.dst, err = strconv.Atoi(p.val); err != nil || *p.dst < 0 || *p.dst > 65535 {
			return c, fmt.Errorf("--%s %q: want 0..65535 (0: off)", p.name, p.val)
		}
	}
	if c.httpPort != 0 && (c.httpPort == c.port || c.httpPort == c.framePort) || c.framePort != 0 && c.framePort == c.port {
		return c, fmt.Errorf("--port %d, --http-port %d and --frame-port %d must differ", c.port, c.httpPort, c.framePort)
	}
	c.bind = *bind
	c.requirePass = *requirePass
	switch strings.ToLower(*protected) {
	case "yes":
		c.protectedMode = true
	case "no":
	default:
		return c, fmt.Errorf("--protected-mode %q: want yes or no", *protected)
	}
	if c.maxClients, err = strconv.Atoi(*maxClients); err != nil || c.maxClients < 1 {
		return c, fmt.Errorf("--maxclients %q: want a positive integer", *maxClients)
	}
	if c.maxMemory, err = kv.ParseMemory(*maxMemory); err != nil {
		return c, fmt.Errorf("--maxmemory: %w", err)
	}
	if c.policy, err = store.ParsePolicy(*policy); err != nil {
		return c, fmt.Errorf("--maxmemory-policy: %w", err)
	}
	if c.loops, err = strconv.Atoi(*loops); err != nil || c.loops < 0 {
		return c, fmt.Errorf("--loops %q: want a non-negative integer", *loops)
	}
	switch *engine {
	case "native", "gnet":
		c.engine = *engine
	default:
		return c, fmt.Errorf("--engine %q: want native or gnet", *engine)
	}
	if c.engine == "gnet" && (c.httpPort != 0 || c.framePort != 0) {
		return c, fmt.Errorf("--http-port and --frame-port need --engine native: the gnet engine serves one address")
	}
	switch *balancer {
	case "roundrobin", "leastconn", "loadaware":
		c.balancer = *balancer
	default:
		return c, fmt.Errorf("--balancer %q: want roundrobin, leastconn or loadaware", *balancer)
	}
	if c.idleTimeout, err = parseDuration(*idle); err != nil || c.idleTimeout < 0 {
		return c, fmt.Errorf("--idle-timeout %q: want a duration such as 300s, or seconds", *idle)
	}
	if c.logLevel, err = kv.ParseLogLevel(*logLevel); err != nil {
		return c, fmt.Errorf("--loglevel: %w", err)
	}
	c.logLevelName = strings.ToLower(*logLevel)
	mq, err := kv.ParseMemory(*maxQuery)
	if err != nil || mq < 1024 || mq > 1<<40 {
		return c, fmt.Errorf("--max-query-buffer %q: want a size between 1kb and 1tb", *maxQuery)
	}
	c.maxQueryBuffer = int(mq)
	c.pprofAddr = *pprofAddr
	if c.shutdownTimeout, err = parseDuration(*shutdown); err != nil || c.shutdownTimeout <= 0 {
		return c, fmt.Errorf("--shutdown-timeout %q: want a positive duration", *shutdown)
	}
	if c.appendOnly, err = parseYesNo(*appendOnly); err != nil {
		return c, fmt.Errorf("--appendonly %q: want yes or no", *appendOnly)
	}
	if c.loadTruncated, err = parseYesNo(*loadTruncated); err != nil {
		return c, fmt.Errorf("--aof-load-truncated %q: want yes or no", *loadTruncated)
	}
	if c.appendFsync, err = aof.ParseFsync(strings.ToLower(*appendFsync)); err != nil {
		return c, fmt.Errorf("--appendfsync: %w", err)
	}
	c.dir = *dir
	c.appendFilename = *appendFilename
	if c.appendFilename == "" || strings.ContainsRune(c.appendFilename, '/') {
		return c, fmt.Errorf("--appendfilename %q: want a file name without a directory (use --dir)", c.appendFilename)
	}
	return c, nil
}

func parseYesNo(s string) (bool, error) {
	switch strings.ToLower(s) {
	case "yes":
		return true, nil
	case "no":
		return false, nil
	}
	return false, fmt.Errorf("want yes or no")
}

// parseDuration accepts Go durations ("300s") and plain seconds ("300"), the
// unit redis.conf uses for timeout.
func parseDuration(s string) (time.Duration, error) {
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		return time.Duration(n) * time.Second, nil
	}
	return time.ParseDuration(s)
}

// loadAndOpenAOF replays the append-only file and attaches a writer to it.
func loadAndOpenAOF(h *kv.Handler, cfg config, logger *slog.Logger) (*aof.Writer, error) {
	start := time.Now()
	logger.Info("loading the append only file", "path", cfg.appendFilename)
	st, err := h.LoadAOF(cfg.appendFilename, cfg.loadTruncated)
	if err != nil {
		return nil, err
	}
	if st.Truncated > 0 {
		logger.Warn("the append only file ended with a truncated command: cut it off (aof-load-truncated yes)",
			"path", cfg.appendFilename, "offset", st.Bytes, "bytes_removed", st.Truncated)
	}
	logger.Info("append only file loaded", "path", cfg.appendFilename, "commands", st.Commands,
		"bytes", st.Bytes, "seconds", time.Since(start).Seconds())
	w, err := aof.Open(cfg.appendFilename, cfg.appendFsync, logger)
	if err != nil {
		return nil, err
	}
	h.AttachAOF(w, cfg.loadTruncated)
	return w, nil
}

func run(cfg config) error {
	// Catch signals before listening: a SIGTERM that arrives as soon as the
	// port accepts must still mean a clean stop, not the default kill.
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT)
	level := new(slog.LevelVar)
	level.Set(cfg.logLevel)
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
	slog.SetDefault(logger)

	cfg.maxClients = capMaxClients(cfg.maxClients, logger)
	st := store.New(store.Options{MaxMemory: cfg.maxMemory, Policy: cfg.policy})
	defer st.Close()
	h := kv.New(st, kv.Options{
		RequirePass:          cfg.requirePass,
		DisableProtectedMode: !cfg.protectedMode,
		Logger:               logger,
		LogLevel:             level,
	})
	defer h.Close()

	// The file is loaded before the port opens, so no client ever sees a
	// partial keyspace or needs to handle -LOADING; a client connecting
	// meanwhile is refused and retries, as it would while the server starts.
	if err := os.Chdir(cfg.dir); err != nil {
		return fmt.Errorf("--dir: %w", err)
	}
	if cfg.appendOnly {
		w, err := loadAndOpenAOF(h, cfg, logger)
		if err != nil {
			return err
		}
		// Runs after the server's shutdown (defers are LIFO): the last
		// records are written and synced before the process exits.
		defer func() {
			if err := w.Close(); err != nil {
				logger.Error("closing the append only file", "err", err)
			}
		}()
	}

	var bal eventloop.Balancer
	switch cfg.balancer {
	case "roundrobin":
		bal = &eventloop.RoundRobin{}
	case "leastconn":
		bal = eventloop.LeastConnections{}
	default:
		bal = &eventloop.LoadAware{}
	}
	var engine eventloop.Engine // nil: native
	if cfg.engine == "gnet" {
		engine = gnetengine.Engine{}
	}
	edge := server.New(h)
	srv, err := eventloop.NewServer(edge, eventloop.Options{
		Engine:           engine,
		Addr:             net.JoinHostPort(cfg.bind, strconv.Itoa(cfg.port)),
		Loops:            cfg.loops,
		Balancer:         bal,
		MaxConns:         cfg.maxClients,
		RejectMessage:    []byte("-ERR max number of clients reached\r\n"),
		MaxInboundBuffer: cfg.maxQueryBuffer,
		IdleTimeout:      cfg.idleTimeout,
		Logger:           logger,
		Listeners:        fronts(cfg, edge),
	})
	if err != nil {
		return err
	}
	// pprof listens before the RESP port does, so a client (or test) that
	// sees the server up finds the profiles there too.
	if cfg.pprofAddr != "" {
		if err := servePprof(cfg.pprofAddr, logger); err != nil {
			return err
		}
	}
	if err := srv.Start(); err != nil {
		return err
	}
	// Report the loops actually started: --loops 0 means GOMAXPROCS.
	addrs := srv.Addrs()
	if cfg.httpPort != 0 {
		logger.Info("HTTP front listening", "addr", addrs[1].String())
	}
	if cfg.framePort != 0 {
		logger.Info("frame front listening", "addr", addrs[len(addrs)-1].String())
	}
	logger.Info("shoal ready to accept connections", "addr", srv.Addr().String(),
		"loops", len(srv.LoopStats()), "engine", cfg.engine, "balancer", cfg.balancer, "maxclients", cfg.maxClients,
		"auth", cfg.requirePass != "")

	served := make(chan error, 1)
	go func() { served <- srv.Serve() }()
	select {
	case sig := <-sigs:
		logger.Info("shutting down: answering requests already received", "signal", sig.String())
		ctx, cancel := context.WithTimeout(context.Background(), cfg.shutdownTimeout)
		defer cancel()
		if err := srv.Shutdown(ctx); err != nil && !errors.Is(err, eventloop.ErrServerClosed) {
			return fmt.Errorf("shutdown: %w", err)
		}
		if err := <-served; err != nil && !errors.Is(err, eventloop.ErrServerClosed) {
			return err
		}
		logger.Info("shoal stopped cleanly")
		return nil
	case err := <-served:
		if errors.Is(err, eventloop.ErrServerClosed) {
			return nil
		}
		return err
	}
}

// fronts returns the HTTP and frame listeners the flags ask for, in that
// order, on --bind.
func fronts(cfg config, h *server.Handler) []eventloop.Listener {
	var ls []eventloop.Listener
	if cfg.httpPort != 0 {
		const msg = "max number of clients reached\n"
		ls = append(ls, eventloop.Listener{
			Addr:    net.JoinHostPort(cfg.bind, strconv.Itoa(cfg.httpPort)),
			Handler: h.HTTPHandler(),
			RejectMessage: []byte("HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain\r\nContent-Length: " +
				strconv.Itoa(len(msg)) + "\r\nConnection: close\r\n\r\n" + msg),
		})
	}
	if cfg.framePort != 0 {
		ls = append(ls, eventloop.Listener{
			Addr:          net.JoinHostPort(cfg.bind, strconv.Itoa(cfg.framePort)),
			Handler:       h.FrameHandler(),
			RejectMessage: frame.AppendErrorResponse(nil, "max number of clients reached"),
		})
	}
	return ls
}
