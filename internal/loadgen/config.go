package loadgen

import (
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"
)

// Config is a set of options for one run; Validate checks it.
type Config struct {
	Protocol string
	Addr     string
	Conns    int
	Pipeline int
	Requests int64         // measured requests; 0 = run for Duration
	Duration time.Duration // measured duration when Requests == 0
	Warmup   time.Duration
	Rate     float64 // open loop requests/s across all connections; 0 = closed loop
	// StrictSchedule times open-loop requests from their due time even when only the
	// client's timer made them late.
	StrictSchedule bool
	Mix            []opWeight
	Keyspace       uint64
	ValueSize      int
	Dist           string // "uniform" or "zipf"
	ZipfS          float64
	Sources        []net.IP
	Timeout        time.Duration // dial timeout and the longest wait for any reply
	Progress       time.Duration // progress line period; 0 = markers only
	Seed           uint64

	// For the stress rig (benchmark/cmd/rigclient); zero values keep shoal-load's behaviour.

	// Addrs, when set, replaces Addr: connection i goes to Addrs[i%len(Addrs)], e.g. the
	// addresses of several server replicas.
	Addrs []string
	// DialRate caps new connections per second during Dial; 0 = as fast as they open.
	DialRate float64
	// OwnKeys gives every connection one key of its own, key:<KeyBase+i> for connection i,
	// instead of keys drawn from Keyspace: Verify sets and reads it back, and the load uses
	// only it. Sharded or replicated servers then never see two connections share a key.
	OwnKeys bool
	KeyBase uint64
	// ExportHistogram puts the run's whole latency histogram into Report.Histogram, so
	// reports of several clients can be merged exactly (MergeHistograms).
	ExportHistogram bool
	// LowMemory sizes each connection's buffers for very many connections at low rates:
	// buffers start small and grow on demand, and at most lowMemoryBatchRing open-loop
	// writes may await replies per connection instead of openBatchRing.
	LowMemory bool
}

type opWeight struct {
	Op     opKind
	Weight int
}

// Limits on options, so a typo fails with the value and the limit instead of exhausting
// memory or file descriptors.
const (
	maxConns     = 1 << 20
	maxPipeline  = 1 << 16
	maxValueSize = 512 << 20
	maxKeyspace  = 1_000_000_000_000 // keyDigits decimal digits
)

func (c *Config) Validate() error {
	switch {
	case c.Conns < 1 || c.Conns > maxConns:
		return fmt.Errorf("-c %d: connections must be between 1 and %d", c.Conns, maxConns)
	case c.Pipeline < 1 || c.Pipeline > maxPipeline:
		return fmt.Errorf("-P %d: pipeline depth must be between 1 and %d", c.Pipeline, maxPipeline)
	case c.Requests < 0:
		return fmt.Errorf("-n %d: request count must not be negative", c.Requests)
	case c.Requests == 0 && c.Duration <= 0:
		return fmt.Errorf("-d %v: give a positive duration or a request count (-n)", c.Duration)
	case c.Warmup < 0:
		return fmt.Errorf("-warmup %v: must not be negative", c.Warmup)
	case c.Rate < 0:
		return fmt.Errorf("-rate %v: must not be negative", c.Rate)
	case c.Keyspace < 1 || c.Keyspace > maxKeyspace:
		return fmt.Errorf("-keyspace %d: must be between 1 and %d", c.Keyspace, uint64(maxKeyspace))
	case c.ValueSize < 0 || c.ValueSize > maxValueSize:
		return fmt.Errorf("-value-size %d: must be between 0 and %d", c.ValueSize, maxValueSize)
	case c.Dist != "uniform" && c.Dist != "zipf":
		return fmt.Errorf("-dist %q: want uniform or zipf", c.Dist)
	case c.Dist == "zipf" && c.ZipfS <= 1:
		return fmt.Errorf("-zipf-s %v: the Zipf exponent must be > 1", c.ZipfS)
	case c.Timeout <= 0:
		return fmt.Errorf("-timeout %v: must be positive", c.Timeout)
	case len(c.Mix) == 0:
		return fmt.Errorf("empty workload: give -t or -ratio")
	}
	if c.DialRate < 0 {
		return fmt.Errorf("-dial-rate %v: must not be negative", c.DialRate)
	}
	if c.OwnKeys && (c.KeyBase > maxKeyspace || uint64(c.Conns) > maxKeyspace-c.KeyBase) {
		return fmt.Errorf("key base %d + %d connections exceeds the %d keys that key digits can name", c.KeyBase, c.Conns, uint64(maxKeyspace))
	}
	if c.Rate > 0 && c.Requests > 0 && c.Requests < int64(c.Conns) {
		return fmt.Errorf("-n %d is smaller than -c %d: every open-loop connection needs at least one request", c.Requests, c.Conns)
	}
	return nil
}

// ParseCommands parses -t: "get,set" (equal weights) or "get:9,set:1".
func ParseCommands(s string) ([]opWeight, error) {
	var mix []opWeight
	for _, f := range strings.Split(s, ",") {
		f = strings.ToLower(strings.TrimSpace(f))
		if f == "" {
			continue
		}
		name, w := f, 1
		if i := strings.IndexByte(f, ':'); i >= 0 {
			n, err := strconv.Atoi(f[i+1:])
			if err != nil || n < 0 || n > 1_000_000 {
				return nil, fmt.Errorf("-t %q: weight %q must be an integer between 0 and 1000000", s, f[i+1:])
			}
			name, w = f[:i], n
		}
		op, err := parseOp(name)
		if err != nil {
			return nil, fmt.Errorf("-t %q: %w", s, err)
		}
		if w > 0 {
			mix = append(mix, opWeight{op, w})
		}
	}
	if len(mix) == 0 {
		return nil, fmt.Errorf("-t %q: no command with a positive weight", s)
	}
	return mix, nil
}

// ParseRatio parses -ratio GET:SET, e.g. "9:1" or "1:0".
func ParseRatio(s string) ([]opWeight, error) {
	a, b, ok := strings.Cut(s, ":")
	if !ok {
		return nil, fmt.Errorf("-ratio %q: want GET:SET, e.g. 9:1", s)
	}
	g, err1 := strconv.Atoi(a)
	w, err2 := strconv.Atoi(b)
	if err1 != nil || err2 != nil || g < 0 || w < 0 || g > 1_000_000 || w > 1_000_000 || g+w == 0 {
		return nil, fmt.Errorf("-ratio %q: want two integers between 0 and 1000000, not both 0", s)
	}
	var mix []opWeight
	if g > 0 {
		mix = append(mix, opWeight{opGet, g})
	}
	if w > 0 {
		mix = append(mix, opWeight{opSet, w})
	}
	return mix, nil
}

// ParseSources parses -src, a comma-separated list of local IP addresses.
func ParseSources(s string) ([]net.IP, error) {
	var ips []net.IP
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		ip := net.ParseIP(f)
		if ip == nil {
			return nil, fmt.Errorf("-src: %q is not an IP address", f)
		}
		ips = append(ips, ip)
	}
	return ips, nil
}

func mixString(mix []opWeight) string {
	parts := make([]string, len(mix))
	for i, m := range mix {
		parts[i] = fmt.Sprintf("%s:%d", m.Op, m.Weight)
	}
	return strings.Join(parts, ",")
}
