package kv

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"
)

// Server commands: INFO, TIME, COMMAND.

// now is the clock relative expiries are based on (unix ms).
func (h *Handler) now() int64 {
	if h.opts.Now != nil {
		return h.opts.Now()
	}
	return nowMillis()
}

// infoSections are INFO's sections in Redis's order.
var infoSections = []string{"server", "clients", "memory", "stats", "keyspace"}

func cmdInfo(h *Handler, cl *client, args [][]byte) {
	want := map[string]bool{}
	if len(args) == 1 {
		for _, s := range infoSections {
			want[s] = true
		}
	}
	for _, a := range args[1:] {
		s := strings.ToLower(string(a))
		switch s {
		case "all", "default", "everything":
			for _, s := range infoSections {
				want[s] = true
			}
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
	st := h.store.Stats()
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
		field("tcp_port", h.opts.Port)
		field("server_time_usec", time.Now().UnixMicro())
		field("uptime_in_seconds", uptime)
		field("uptime_in_days", uptime/86400)
		field("hz", 10)
		field("configured_hz", 10)
		field("executable", exe)
		field("config_file", "")
	case "clients":
		b = append(b, "# Clients\r\n"...)
		field("connected_clients", h.clients.count())
		field("cluster_connections", 0)
		field("maxclients", h.opts.MaxClients)
		field("blocked_clients", 0)
		field("tracking_clients", 0)
	case "memory":
		b = append(b, "# Memory\r\n"...)
		h.cfg.mu.Lock()
		maxMemory, policy := h.cfg.maxMemory, h.cfg.policy.String()
		h.cfg.mu.Unlock()
		peak := h.notePeak(st.UsedMemory)
		field("used_memory", st.UsedMemory)
		field("used_memory_human", bytesToHuman(st.UsedMemory))
		field("used_memory_peak", peak)
		field("used_memory_peak_human", bytesToHuman(peak))
		field("maxmemory", maxMemory)
		field("maxmemory_human", bytesToHuman(maxMemory))
		field("maxmemory_policy", policy)
	case "stats":
		b = append(b, "# Stats\r\n"...)
		field("total_connections_received", h.totalConnections.Load())
		field("total_commands_processed", h.totalCommands.Load())
		field("instantaneous_ops_per_sec", h.ops.rate.Load())
		field("rejected_connections", 0)
		field("expired_keys", st.ExpiredKeys)
		field("evicted_keys", st.EvictedKeys)
		field("keyspace_hits", st.Hits)
		field("keyspace_misses", st.Misses)
	case "keyspace":
		b = append(b, "# Keyspace\r\n"...)
		if st.Keys > 0 {
			b = fmt.Appendf(b, "db0:keys=%d,expires=%d,avg_ttl=0\r\n", st.Keys, st.Expires)
		}
	}
	return b
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
