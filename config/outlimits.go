package config

import (
	"errors"
	"strconv"
	"strings"
	"time"
)

// Output-buffer limit classes, as Redis's client-output-buffer-limit names
// them; the index of each in an OutputLimits.
const (
	ClassNormal = iota
	ClassReplica
	ClassPubsub
	NumClasses
)

// classNames are the classes as CONFIG GET spells them (Redis 7.0 still
// says "slave").
var classNames = [NumClasses]string{"normal", "slave", "pubsub"}

// ClassName returns the name CLIENT LIST and the logs give class:
// normal, replica or pubsub.
func ClassName(class int) string {
	if class == ClassReplica {
		return "replica"
	}
	return classNames[class]
}

// OutputLimit is one class's limits: close a client with more than Hard
// bytes of output pending, or more than Soft for longer than SoftFor. 0 is
// no limit.
type OutputLimit struct {
	Hard, Soft int64
	SoftFor    time.Duration
}

// OutputLimits is the value of client-output-buffer-limit: the classes
// it sets, by class index.
type OutputLimits struct {
	Set    [NumClasses]bool
	Limits [NumClasses]OutputLimit
}

// defaultOutputLimits is client-output-buffer-limit's default: Redis's.
const defaultOutputLimits = "normal 0 0 0 slave 256mb 64mb 60 pubsub 32mb 8mb 60"

// DefaultOutputLimits returns client-output-buffer-limit's default, every
// class set: what a value that sets some classes is merged over.
func DefaultOutputLimits() OutputLimits {
	o, err := ParseOutputLimits(defaultOutputLimits)
	if err != nil {
		panic("config: the default client-output-buffer-limit does not parse: " + err.Error())
	}
	return o
}

// OutputLimitsKind is client-output-buffer-limit's kind: groups of
// "<class> <hard> <soft> <soft-seconds>", with Redis's memory units. A
// value may set some of the classes; the others keep theirs.
type OutputLimitsKind struct{}

// limitError is a reason redis-server 7.0 gives for a value it refuses,
// in its words: a sentence, where its other reasons are not.
type limitError string

func (e limitError) Error() string { return string(e) }

const (
	errLimitArgs  limitError = "Wrong number of arguments in buffer limit configuration."
	errLimitClass limitError = "Invalid client class specified in buffer limit configuration."
	errLimitValue limitError = "Error in hard, soft or soft_seconds setting in buffer limit configuration."
)

// ParseOutputLimits parses a client-output-buffer-limit value.
func ParseOutputLimits(s string) (OutputLimits, error) {
	var o OutputLimits
	f := strings.Fields(s)
	if len(f)%4 != 0 {
		return o, errLimitArgs
	}
	for ; len(f) > 0; f = f[4:] {
		class := -1
		switch strings.ToLower(f[0]) {
		case "normal":
			class = ClassNormal
		case "slave", "replica":
			class = ClassReplica
		case "pubsub":
			class = ClassPubsub
		default:
			return o, errLimitClass
		}
		hard, err1 := ParseMemory(f[1])
		soft, err2 := ParseMemory(f[2])
		secs, err3 := strconv.ParseInt(f[3], 10, 64)
		if err1 != nil || err2 != nil || err3 != nil || secs < 0 || secs > 1<<32 {
			return o, errLimitValue
		}
		o.Set[class] = true
		o.Limits[class] = OutputLimit{Hard: hard, Soft: soft, SoftFor: time.Duration(secs) * time.Second}
	}
	return o, nil
}

// String formats o as CONFIG GET does: the classes it sets, in class order.
func (o OutputLimits) String() string {
	var b []byte
	for class, l := range o.Limits {
		if !o.Set[class] {
			continue
		}
		if len(b) > 0 {
			b = append(b, ' ')
		}
		b = append(b, classNames[class]...)
		b = append(b, ' ')
		b = strconv.AppendInt(b, l.Hard, 10)
		b = append(b, ' ')
		b = strconv.AppendInt(b, l.Soft, 10)
		b = append(b, ' ')
		b = strconv.AppendInt(b, int64(l.SoftFor/time.Second), 10)
	}
	return string(b)
}

// Merge returns o with the classes that v sets replaced.
func (o OutputLimits) Merge(v OutputLimits) OutputLimits {
	for class := range v.Set {
		if v.Set[class] {
			o.Set[class], o.Limits[class] = true, v.Limits[class]
		}
	}
	return o
}

// Parse implements Kind.
func (OutputLimitsKind) Parse(s string) (string, error) {
	o, err := ParseOutputLimits(s)
	if err != nil {
		return "", err
	}
	return o.String(), nil
}

// Values implements Kind.
func (OutputLimitsKind) Values() string {
	return "<class> <hard> <soft> <soft-seconds> ..., class normal|replica|pubsub"
}

// MemoryOrPercentKind is a byte size, or a percentage of maxmemory written
// "10%" (at most 100): maxmemory-clients. Its canonical form is the number
// of bytes, or the percentage with its sign; "0%" is 0.
type MemoryOrPercentKind struct{}

// MemoryOrPercent is the kind of maxmemory-clients.
func MemoryOrPercent() MemoryOrPercentKind { return MemoryOrPercentKind{} }

// Parse implements Kind.
func (MemoryOrPercentKind) Parse(s string) (string, error) {
	if p, ok := strings.CutSuffix(s, "%"); ok {
		n, err := strconv.ParseInt(p, 10, 64)
		if err != nil || n < 0 {
			return "", errors.New("argument must be a memory or percent value")
		}
		if n > 100 {
			return "", errors.New("percentage argument must be less or equal to 100")
		}
		if n == 0 {
			return "0", nil
		}
		return strconv.FormatInt(n, 10) + "%", nil
	}
	n, err := ParseMemory(s)
	if err != nil {
		return "", errors.New("argument must be a memory or percent value")
	}
	return strconv.FormatInt(n, 10), nil
}

// Values implements Kind.
func (MemoryOrPercentKind) Values() string {
	return "bytes, with a unit (100mb), or a percentage of maxmemory (10%)"
}

// ResolveMemoryOrPercent returns a MemoryOrPercent value in bytes, taking
// a percentage of maxmemory (0 when maxmemory is 0).
func ResolveMemoryOrPercent(v string, maxmemory int64) int64 {
	if p, ok := strings.CutSuffix(v, "%"); ok {
		n, _ := strconv.ParseInt(p, 10, 64)
		return maxmemory / 100 * n
	}
	n, _ := strconv.ParseInt(v, 10, 64)
	return n
}
