// Command shoal is a Redis-compatible in-memory key-value server built on
// Shoal's event loops.
//
// The flags are the rows of the settings table, config.Params, which CONFIG
// GET and SET also serve. Every flag can also be given as an environment
// variable named SHOAL_ plus the flag name in upper case with dashes as
// underscores (--maxmemory-policy is SHOAL_MAXMEMORY_POLICY). An explicit
// flag wins over the environment, which wins over the default.
//
// SIGTERM and SIGINT stop accepting, answer every request already received,
// flush, and exit 0 (within --shutdown-timeout, default 30s). Received means
// acknowledged by the kernel before the signal: also on a connection still
// queued on the listener, which is accepted and answered before it closes.
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
// over HTTP/1.1 and HTTP/2 (GET/PUT/DELETE /kv/{key}, POST /kv/{key}/incr,
// /healthz, /metrics) and proto/frame's binary frames, on the same event
// loops and --bind address; --requirepass and protected mode apply to them
// too. --http-tls-port serves the HTTP front over TLS (h2 by ALPN).
//
// --unixsocket serves RESP on a Unix socket too, made with
// --unixsocketperm's mode and removed at exit; --port 0 serves the socket
// alone, as in Redis (unixsocket.go).
//
// --engine gnet serves the same handler on gnet v2 instead of Shoal's own
// event loops (--engine native, the default); eventloop/gnetengine's
// documentation lists what that engine does differently.
//
// Persistence: --appendonly yes logs every write to --appendfilename in
// --dir and replays it at startup, before the port opens; --appendfsync
// always acknowledges a write only once it is on disk (see package aof).
// Without it, the RDB snapshot --dbfilename (dump.rdb) in --dir is loaded
// at startup if it exists; SAVE and BGSAVE write it, and so do the --save
// policy (none by default, unlike Redis: see its usage line) and a SIGTERM
// while a policy is set.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/shoalkv/shoal/aof"
	"github.com/shoalkv/shoal/config"
	"github.com/shoalkv/shoal/eventloop"
	"github.com/shoalkv/shoal/eventloop/gnetengine"
	"github.com/shoalkv/shoal/kv"
	"github.com/shoalkv/shoal/proto/frame"
	"github.com/shoalkv/shoal/server"
	"github.com/shoalkv/shoal/store"
)

// balancers and engines are what --balancer and --engine name; the rows of
// config.Params list the same names (TestEveryBalancerAndEngineIsBuilt).
var (
	balancers = map[string]func() eventloop.Balancer{
		"roundrobin": func() eventloop.Balancer { return &eventloop.RoundRobin{} },
		"leastconn":  func() eventloop.Balancer { return eventloop.LeastConnections{} },
		"loadaware":  func() eventloop.Balancer { return &eventloop.LoadAware{} },
	}
	engines = map[string]eventloop.Engine{"native": nil, "gnet": gnetengine.Engine{}}
)

func main() {
	params, err := parseConfig(os.Args[1:], os.Getenv)
	if err != nil {
		fmt.Fprintln(os.Stderr, "shoal:", err)
		os.Exit(2)
	}
	if err := run(params); err != nil {
		slog.Error("shoal stopped", "err", err)
		if params.Get("logfile") != "" {
			fmt.Fprintln(os.Stderr, "shoal:", err) // and where whoever started it looks
		}
		os.Exit(1)
	}
}

// configFile is the absolute path of the configuration file shoal was
// started with ("" for none), for INFO's config_file.
var configFile string

// parseConfig fills the settings table (config.Params) from the
// configuration file named first in args, if any, then the flags in args
// and the SHOAL_* environment variables getenv reads (an explicit flag
// wins over a variable, either over the file), and checks what no single row can: that the ports differ and the
// fronts have an engine that serves them.
func parseConfig(args []string, getenv func(string) string) (*config.Table, error) {
	params := config.New(config.Params())
	// As redis-server: a first argument that is not a flag is the
	// configuration file; flags and variables override what it sets.
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		path, err := filepath.Abs(args[0])
		if err != nil {
			return nil, err
		}
		if err := params.ApplyFile(path); err != nil {
			return nil, err
		}
		configFile = path
		args = args[1:]
	}
	if err := params.ParseFlags(flag.NewFlagSet("shoal", flag.ContinueOnError), args, getenv); err != nil {
		return nil, err
	}
	port, httpPort, framePort := params.Int("port"), params.Int("http-port"), params.Int("frame-port")
	if httpPort != 0 && (httpPort == port || httpPort == framePort) || framePort != 0 && framePort == port {
		return nil, fmt.Errorf("--port %d, --http-port %d and --frame-port %d must differ", port, httpPort, framePort)
	}
	if err := checkTLSPort(params); err != nil {
		return nil, err
	}
	if params.Get("engine") == "gnet" && (httpPort != 0 || framePort != 0) {
		return nil, errors.New("--http-port and --frame-port need --engine native: the gnet engine serves one address")
	}
	if err := checkListening(params); err != nil {
		return nil, err
	}
	return params, nil
}

// loadAndOpenAOF replays the append-only file and attaches a writer to it.
func loadAndOpenAOF(h *kv.Handler, params *config.Table, logger *slog.Logger) (*aof.Writer, error) {
	start := time.Now()
	name, loadTruncated := params.Get("appendfilename"), params.Bool("aof-load-truncated")
	fsync, err := aof.ParseFsync(params.Get("appendfsync"))
	if err != nil {
		return nil, err
	}
	logger.Info("loading the append only file", "path", name)
	st, err := h.LoadAOF(name, loadTruncated)
	if err != nil {
		return nil, err
	}
	if st.Truncated > 0 {
		logger.Warn("the append only file ended with a truncated command: cut it off (aof-load-truncated yes)",
			"path", name, "offset", st.Bytes, "bytes_removed", st.Truncated)
	}
	logger.Info("append only file loaded", "path", name, "commands", st.Commands,
		"bytes", st.Bytes, "seconds", time.Since(start).Seconds())
	w, err := aof.Open(name, fsync, logger)
	if err != nil {
		return nil, err
	}
	h.AttachAOF(w, loadTruncated)
	return w, nil
}

// loadSnapshot loads the RDB file name in the working directory, if there
// is one. A file that cannot be read whole stops the start, with the byte
// offset and the reason.
func loadSnapshot(h *kv.Handler, name string, logger *slog.Logger) error {
	if _, err := os.Stat(name); errors.Is(err, os.ErrNotExist) {
		return nil
	}
	start := time.Now()
	logger.Info("loading the RDB snapshot", "path", name)
	st, err := h.LoadRDB(name)
	if err != nil {
		return fmt.Errorf("loading the RDB snapshot %s: %w", name, err)
	}
	logger.Info("DB loaded from disk", "path", name, "rdb_version", st.Version, "keys", st.Keys,
		"expired_skipped", st.Expired, "function_libraries", st.Libs, "bytes", st.Bytes,
		"seconds", time.Since(start).Seconds())
	return nil
}

// run serves until a signal or a failure. It reads the startup settings
// from params once; the run-time ones it hands to their owners (kv.New
// applies maxmemory and its policy to the store, the password, log level
// and appendfsync to kv).
func run(params *config.Table) error {
	// Catch signals before listening: a SIGTERM that arrives as soon as the
	// port accepts must still mean a clean stop, not the default kill.
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT)
	logLevel, err := kv.ParseLogLevel(params.Get("loglevel"))
	if err != nil {
		return err
	}
	level := new(slog.LevelVar)
	level.Set(logLevel)

	// Before kv.New, which reports the working directory as CONFIG's dir.
	if err := os.Chdir(params.Get("dir")); err != nil {
		return fmt.Errorf("--dir: %w", err)
	}
	var logOut io.Writer = os.Stderr
	if name := params.Get("logfile"); name != "" {
		f, err := os.OpenFile(name, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
		if err != nil {
			return fmt.Errorf("--logfile: %w", err)
		}
		logOut = f // left open: main logs why run returned
	}
	logger := slog.New(slog.NewTextHandler(logOut, &slog.HandlerOptions{Level: level}))
	slog.SetDefault(logger)
	if name := params.Get("pidfile"); name != "" {
		if err := os.WriteFile(name, []byte(strconv.Itoa(os.Getpid())+"\n"), 0o644); err != nil {
			return fmt.Errorf("--pidfile: %w", err)
		}
		defer os.Remove(name)
	}
	maxClients := capMaxClients(int(params.Int("maxclients")), logger)
	// Asked before kv.New: from then on CONFIG's appendonly is kv's, and
	// says whether a file is attached, which is not yet.
	appendOnly := params.Bool("appendonly")
	st := store.New(store.Options{})
	defer st.Close()
	h := kv.New(st, kv.Options{Logger: logger, LogLevel: level, Params: params, ConfigFile: configFile})
	defer h.Close()
	// As Redis, an aclfile with an error refuses the start, naming the line.
	if err := h.LoadACLFile(); err != nil {
		return err
	}

	// The file is loaded before the port opens, so no client ever sees a
	// partial keyspace or needs to handle -LOADING; a client connecting
	// meanwhile is refused and retries, as it would while the server starts.
	// As Redis decides: the append-only file when appendonly is yes, else
	// the snapshot if there is one.
	if appendOnly {
		w, err := loadAndOpenAOF(h, params, logger)
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
	} else if err := loadSnapshot(h, params.Get("dbfilename"), logger); err != nil {
		return err
	}
	h.StartSnapshots() // the save policy counts changes from here

	engine, balancer, port := params.Get("engine"), params.Get("balancer"), params.Get("port")
	addrs, err := bindAddrs(params.Get("bind"), port, engine == "gnet", logger)
	if err != nil {
		return err
	}
	// As Redis: port 0 listens on no plaintext TCP port, only on the TLS
	// port or the Unix socket (parseConfig made sure there is one); the
	// fronts stay on bind.
	unixSocket, tcp := params.Get("unixsocket"), port != "0"
	if tcp && len(addrs) > 1 && engine == "gnet" {
		return fmt.Errorf("--bind %q: the gnet engine serves one address", params.Get("bind"))
	}
	bind := addrs[0]
	edge := server.New(h)
	listeners := fronts(bind, int(params.Int("http-port")), int(params.Int("frame-port")), edge)
	nodes, busListener, err := startCluster(params, h, bind, engine, logger)
	if err != nil {
		return err
	}
	if nodes != nil {
		defer nodes.Close()
		listeners = append(listeners, busListener)
	}
	if tcp {
		for _, a := range addrs[1:] {
			listeners = append(listeners, eventloop.Listener{Addr: net.JoinHostPort(a, port), Handler: edge, RejectMessage: []byte(errMaxClients)})
		}
	}
	mainAddr, mainTLS, listeners, err := withTLSPort(params, bind, net.JoinHostPort(bind, port), listeners, edge)
	if err != nil {
		return err
	}
	network := "tcp"
	if unixSocket != "" {
		if err := clearUnixSocket(unixSocket); err != nil {
			return err
		}
		if !tcp && mainTLS == nil { // the socket alone
			network, mainAddr = "unix", unixSocket
		} else {
			listeners = append(listeners, eventloop.Listener{Network: "unix", Addr: unixSocket, Handler: edge, RejectMessage: []byte(errMaxClients)})
		}
	}
	srv, err := eventloop.NewServer(edge, eventloop.Options{
		Engine:           engines[engine],
		Network:          network,
		Addr:             mainAddr,
		TLSConfig:        mainTLS,
		Loops:            int(params.Int("loops")),
		Balancer:         balancers[balancer](),
		MaxConns:         maxClients,
		RejectMessage:    []byte(errMaxClients),
		MaxInboundBuffer: int(params.Int("max-query-buffer")),
		IdleTimeout:      params.Duration("timeout"),
		TCPKeepAlive:     time.Duration(params.Int("tcp-keepalive")) * time.Second,
		Logger:           logger,
		Listeners:        listeners,
	})
	if err != nil {
		return err
	}
	// pprof listens before the RESP port does, so a client (or test) that
	// sees the server up finds the profiles there too.
	if addr := params.Get("pprof-addr"); addr != "" {
		if err := servePprof(addr, logger); err != nil {
			return err
		}
	}
	if err := startWithSocketMode(params.Get("unixsocketperm"), srv.Start); err != nil {
		return err
	}
	// Report the loops actually started: --loops 0 means GOMAXPROCS.
	// Listening: the RESP port (or the Unix socket alone), the fronts, then
	// the other bind addresses and the Unix socket.
	listening, next := srv.Addrs(), 1
	if params.Int("http-port") != 0 {
		logger.Info("HTTP front listening", "addr", listening[next].String())
		next++
	}
	if params.Int("frame-port") != 0 {
		logger.Info("frame front listening", "addr", listening[next].String())
		next++
	}
	for _, a := range listening[next:] {
		logger.Info("also listening", "addr", a.String())
	}
	logger.Info("shoal ready to accept connections", "addr", srv.Addr().String(),
		"loops", len(srv.Counters()), "engine", engine, "balancer", balancer, "maxclients", maxClients,
		"auth", params.Get("requirepass") != "")

	if nodes != nil {
		nodes.Start()
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve() }()
	select {
	case sig := <-sigs:
		logger.Info("shutting down: answering requests already received", "signal", sig.String())
		if err := stop(srv, served, params, logger); err != nil {
			return err
		}
		return saveOnStop(h, logger)
	case <-h.ShutdownRequested():
		logger.Info("shutting down: answering requests already received", "by", "SHUTDOWN")
		if err := stop(srv, served, params, logger); err != nil {
			return err
		}
		switch h.ShutdownSaveMode() {
		case kv.ShutdownSave:
			return save(h, logger)
		case kv.ShutdownNoSave:
			return nil
		}
		return saveOnStop(h, logger)
	case err := <-served:
		if errors.Is(err, eventloop.ErrServerClosed) {
			return nil
		}
		return err
	}
}

// stop drains srv as SIGTERM asks: every request already received is
// answered before the loops stop, within shutdown-timeout.
func stop(srv *eventloop.Server, served <-chan error, params *config.Table, logger *slog.Logger) error {
	ctx, cancel := context.WithTimeout(context.Background(), params.Duration("shutdown-timeout"))
	defer cancel()
	if err := srv.Shutdown(ctx); err != nil && !errors.Is(err, eventloop.ErrServerClosed) {
		return fmt.Errorf("shutdown: %w", err)
	}
	if err := <-served; err != nil && !errors.Is(err, eventloop.ErrServerClosed) {
		return err
	}
	logger.Info("shoal stopped cleanly")
	return nil
}

// saveOnStop writes a snapshot after a SIGTERM or a plain SHUTDOWN when a
// save policy is set, as Redis does, once the loops have stopped (so it is
// of the final data). SHUTDOWN SAVE saves without a policy, NOSAVE never.
// A save that fails is an exit status of 1 (Redis would refuse to stop).
func saveOnStop(h *kv.Handler, logger *slog.Logger) error {
	if !h.SavePolicy() {
		return nil
	}
	return save(h, logger)
}

func save(h *kv.Handler, logger *slog.Logger) error {
	logger.Info("saving the final RDB snapshot before exiting")
	st, err := h.SaveForShutdown()
	if err != nil {
		return fmt.Errorf("saving the final RDB snapshot: %w", err)
	}
	logger.Info("DB saved on disk", "keys", st.Keys, "bytes", st.Bytes)
	return nil
}

const errMaxClients = "-ERR max number of clients reached\r\n"

// bindAddrs reads bind as Redis 7.0 does: one or more addresses, "*" for
// every IPv4 address and "::*" for every IPv6 one, and a leading "-" for
// an address skipped when it cannot be bound (the sample redis.conf's
// "bind 127.0.0.1 -::1" on a host without IPv6). The RESP port listens on
// each; the HTTP and frame fronts on the first. With one (the gnet engine
// serves one address) an optional address after the first is skipped too,
// with a warning: the sample redis.conf then starts on gnet as well.
func bindAddrs(bind, port string, one bool, logger *slog.Logger) ([]string, error) {
	var addrs []string
	for _, a := range strings.Fields(bind) {
		optional := strings.HasPrefix(a, "-")
		a = strings.TrimPrefix(a, "-")
		switch a {
		case "*":
			a = "0.0.0.0"
		case "::*":
			a = "::"
		}
		if optional && one && len(addrs) > 0 {
			logger.Warn("skipping an optional bind address: the gnet engine serves one address", "addr", a)
			continue
		}
		if optional {
			l, err := net.Listen("tcp", net.JoinHostPort(a, port))
			if err != nil {
				logger.Warn("skipping an optional bind address", "addr", a, "err", err)
				continue
			}
			l.Close()
		}
		addrs = append(addrs, a)
	}
	if len(addrs) == 0 {
		return nil, fmt.Errorf("--bind %q: no address to listen on", bind)
	}
	return addrs, nil
}

// fronts returns the HTTP and frame listeners on bind for the ports that
// are not 0, in that order.
func fronts(bind string, httpPort, framePort int, h *server.Handler) []eventloop.Listener {
	var ls []eventloop.Listener
	if httpPort != 0 {
		const msg = "max number of clients reached\n"
		ls = append(ls, eventloop.Listener{
			Addr:    net.JoinHostPort(bind, strconv.Itoa(httpPort)),
			Handler: h.HTTPHandler(),
			RejectMessage: []byte("HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain\r\nContent-Length: " +
				strconv.Itoa(len(msg)) + "\r\nConnection: close\r\n\r\n" + msg),
		})
	}
	if framePort != 0 {
		ls = append(ls, eventloop.Listener{
			Addr:          net.JoinHostPort(bind, strconv.Itoa(framePort)),
			Handler:       h.FrameHandler(),
			RejectMessage: frame.AppendErrorResponse(nil, "max number of clients reached"),
		})
	}
	return ls
}
