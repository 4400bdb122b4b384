package kv

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/shoalkv/shoal/config"
)

// Server commands: INFO, TIME, COMMAND.

// now is the clock relative expiries are based on (unix ms): the store's,
// so that EXPIRE 10 and the store's own expiry agree on when 10 s end.
func (h *Handler) now() int64 { return h.shared.Now() }

// infoSections are INFO's sections in Redis's order.
var infoSections = []string{"server", "clients", "memory", "persistence", "stats", "replication",
	"cpu", "modules", "commandstats", "errorstats", "latencystats", "cluster", "keyspace"}

// notDefault are the sections INFO shows only when named or with "all" /
// "everything", as in Redis.
var notDefault = map[string]bool{"commandstats": true, "latencystats": true}

func cmdInfo(h *Handler, cl *client, args [][]byte) {
	want := map[string]bool{}
	addAll := func(withExtra bool) {
		for _, s := range infoSections {
			if withExtra || !notDefault[s] {
				want[s] = true
			}
		}
	}
	if len(args) == 1 {
		addAll(false)
	}
	for _, a := range args[1:] {
		s := strings.ToLower(string(a))
		switch s {
		case "default":
			addAll(false)
		case "all", "everything":
			addAll(true)
		default:
			want[s] = true
		}
	}
	var b []byte
	for _, s := range infoSections {
		if !want[s] {
			continue
		}
		if len(b) > 0 {
			b = append(b, "\r\n"...)
		}
		b = h.appendInfoSection(b, s)
	}
	cl.writeVerbatim(b)
}

var runID = func() string {
	var b [20]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}()

func (h *Handler) appendInfoSection(b []byte, section string) []byte {
	field := func(k string, v any) {
		b = fmt.Appendf(b, "%s:%v\r\n", k, v)
	}
	st := h.KeyspaceStats()
	switch section {
	case "server":
		b = append(b, "# Server\r\n"...)
		uptime := int64(time.Since(h.start).Seconds())
		exe, _ := os.Executable()
		field("redis_version", Version)
		field("redis_git_sha1", "00000000")
		field("redis_git_dirty", 0)
		field("redis_build_id", "0")
		field("redis_mode", "standalone")
		field("os", runtime.GOOS+" "+runtime.GOARCH)
		field("arch_bits", strconv.IntSize)
		field("multiplexing_api", multiplexingAPI())
		field("go_version", runtime.Version())
		field("process_id", os.Getpid())
		field("run_id", runID)
		field("tcp_port", h.params.Get("port"))
		field("server_time_usec", time.Now().UnixMicro())
		field("uptime_in_seconds", uptime)
		field("uptime_in_days", uptime/86400)
		field("hz", 10)
		field("configured_hz", 10)
		field("executable", exe)
		field("config_file", h.opts.ConfigFile)
	case "clients":
		b = append(b, "# Clients\r\n"...)
		field("connected_clients", h.clients.count())
		field("cluster_connections", 0)
		field("maxclients", h.params.Get("maxclients"))
		_, largest := h.clientMemory()
		field("client_recent_max_input_buffer", 0)
		field("client_recent_max_output_buffer", largest)
		field("blocked_clients", h.blocking.blocked.Load())
		field("tracking_clients", h.tracking.active.Load())
	case "memory":
		b = append(b, "# Memory\r\n"...)
		maxMemory, policy := h.params.Int("maxmemory"), h.params.Get("maxmemory-policy")
		// As in Redis, used_memory counts the clients' output buffers.
		clients, _ := h.outputMemory()
		used := st.UsedMemory + clients
		peak := h.notePeak(used)
		rss := residentSetSize()
		field("used_memory", used)
		field("used_memory_human", bytesToHuman(used))
		field("used_memory_rss", rss)
		field("used_memory_rss_human", bytesToHuman(rss))
		field("used_memory_peak", peak)
		field("used_memory_peak_human", bytesToHuman(peak))
		field("maxmemory", maxMemory)
		field("maxmemory_human", bytesToHuman(maxMemory))
		field("maxmemory_policy", policy)
		byClass, _ := h.clientMemory()
		field("mem_clients_slaves", byClass[config.ClassReplica])
		field("mem_clients_normal", byClass[config.ClassNormal]+byClass[config.ClassPubsub])
		// As in Redis: RSS over used_memory, so it includes the runtime, the
		// connections' buffers and the arena's partly used pages.
		ratio := 0.0
		if used > 0 {
			ratio = float64(rss) / float64(used)
		}
		field("mem_fragmentation_ratio", strconv.FormatFloat(ratio, 'f', 2, 64))
	case "stats":
		b = append(b, "# Stats\r\n"...)
		field("total_connections_received", h.totalConnections.Load())
		field("total_commands_processed", h.totalCommands())
		field("instantaneous_ops_per_sec", h.ops.rate.Load())
		field("rejected_connections", h.rejectedConnections())
		h.syncStats(field) // primary_info.go
		field("total_error_replies", h.errors.total.Load())
		field("expired_keys", st.ExpiredKeys)
		field("evicted_keys", st.EvictedKeys)
		field("evicted_clients", h.outLimits.evicted.Load())
		field("keyspace_hits", st.Hits)
		field("keyspace_misses", st.Misses)
		channels, patterns, shards := h.pubsub.counts()
		field("pubsub_channels", channels)
		field("pubsub_patterns", patterns)
		field("pubsubshard_channels", shards)
		keys, items, prefixes := h.trackingInfo()
		field("tracking_total_keys", keys)
		field("tracking_total_items", items)
		field("tracking_total_prefixes", prefixes)
	case "persistence":
		b = append(b, "# Persistence\r\n"...)
		h.snapshotInfo(field) // save_info.go
		h.aofInfo(field)
	case "replication":
		b = append(b, "# Replication\r\n"...)
		h.replicationInfo(field) // repl_info.go
	case "cpu":
		b = append(b, "# CPU\r\n"...)
		var ru syscall.Rusage
		_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
		b = fmt.Appendf(b, "used_cpu_sys:%.6f\r\nused_cpu_user:%.6f\r\n",
			float64(ru.Stime.Sec)+float64(ru.Stime.Usec)/1e6, float64(ru.Utime.Sec)+float64(ru.Utime.Usec)/1e6)
	case "modules":
		b = append(b, "# Modules\r\n"...)
	case "commandstats":
		b = append(b, "# Commandstats\r\n"...)
		b = h.appendCommandStats(b)
	case "latencystats":
		b = append(b, "# Latencystats\r\n"...)
		b = h.appendLatencyStats(b)
	case "errorstats":
		b = append(b, "# Errorstats\r\n"...)
		b = h.errors.appendStats(b)
	case "cluster":
		b = append(b, "# Cluster\r\n"...)
		enabled := 0
		if h.cluster != nil {
			enabled = 1
		}
		field("cluster_enabled", enabled)
	case "keyspace":
		b = append(b, "# Keyspace\r\n"...)
		b = h.appendKeyspaceInfo(b)
	}
	return b
}

// residentSetSize is the process's resident memory in bytes, from
// /proc/self/statm (0 where there is none).
func residentSetSize() int64 {
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b))
	if len(f) < 2 {
		return 0
	}
	pages, _ := strconv.ParseInt(f[1], 10, 64)
	return pages * int64(os.Getpagesize())
}

// notePeak records used as a candidate peak and returns the peak so far.
func (h *Handler) notePeak(used int64) int64 {
	for {
		peak := h.peakMemory.Load()
		if used <= peak {
			return peak
		}
		if h.peakMemory.CompareAndSwap(peak, used) {
			return used
		}
	}
}

func multiplexingAPI() string {
	if runtime.GOOS == "linux" {
		return "epoll"
	}
	return "kqueue"
}

// bytesToHuman formats n as Redis's INFO *_human fields do.
func bytesToHuman(n int64) string {
	d := float64(n)
	switch {
	case n < 1024:
		return strconv.FormatInt(n, 10) + "B"
	case n < 1<<20:
		return fmt.Sprintf("%.2fK", d/(1<<10))
	case n < 1<<30:
		return fmt.Sprintf("%.2fM", d/(1<<20))
	case n < 1<<40:
		return fmt.Sprintf("%.2fG", d/(1<<30))
	case n < 1<<50:
		return fmt.Sprintf("%.2fT", d/(1<<40))
	}
	return fmt.Sprintf("%.2fP", d/(1<<50))
}

func cmdTime(_ *Handler, cl *client, _ [][]byte) {
	now := time.Now()
	var buf [20]byte
	cl.writeArray(2)
	cl.writeBulk(strconv.AppendInt(buf[:0], now.Unix(), 10))
	cl.writeBulk(strconv.AppendInt(buf[:0], int64(now.Nanosecond()/1000), 10))
}

// listener reports what the edge (Boot) listens with, for CONFIG GET and
// INFO: its port, bind address, maxclients and idle timeout. The edge
// owns these; before Boot they are zero.
func (h *Handler) listener() (port int, bind string, maxClients int, idle time.Duration) {
	if e := h.edge.Load(); e != nil {
		return (*e).Listener()
	}
	return 0, "", 0, 0
}

// rejectedConnections is how many connections the edge refused over
// maxclients; they never reach the Handler, so only the edge counts them.
func (h *Handler) rejectedConnections() int64 {
	if e := h.edge.Load(); e != nil {
		return (*e).RejectedConnections()
	}
	return 0
}
