package config

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// Kind is the type of a setting's value: it checks a value given as text
// and returns its canonical form, the text CONFIG GET reports.
type Kind interface {
	// Parse validates s and returns its canonical form, or an error whose
	// text is what Redis answers to CONFIG SET with such a value.
	Parse(s string) (string, error)
	// Values describes what the kind accepts, for flag help ("yes|no").
	Values() string
}

// IntKind is an integer between Min and Max inclusive.
type IntKind struct{ Min, Max int64 }

// Int is the kind of integers between min and max inclusive.
func Int(min, max int64) IntKind { return IntKind{min, max} }

// Parse implements Kind.
func (k IntKind) Parse(s string) (string, error) {
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return "", errors.New("argument couldn't be parsed into an integer")
	}
	if n < k.Min || n > k.Max {
		return "", fmt.Errorf("argument must be between %d and %d inclusive", k.Min, k.Max)
	}
	return strconv.FormatInt(n, 10), nil
}

// Values implements Kind.
func (k IntKind) Values() string { return fmt.Sprintf("%d..%d", k.Min, k.Max) }

// YesNo is the kind of switches, "yes" or "no" in any case.
var YesNo Kind = yesNo{}

type yesNo struct{}

func (yesNo) Parse(s string) (string, error) {
	switch strings.ToLower(s) {
	case "yes":
		return "yes", nil
	case "no":
		return "no", nil
	}
	return "", errors.New("argument must be 'yes' or 'no'")
}

func (yesNo) Values() string { return "yes|no" }

// FormatYesNo is a switch's canonical text.
func FormatYesNo(on bool) string {
	if on {
		return "yes"
	}
	return "no"
}

// EnumKind is one of a list of names, in any case; the canonical form is
// the name as listed.
type EnumKind []string

// Enum is the kind of the names given.
func Enum(names ...string) EnumKind { return EnumKind(names) }

// Parse implements Kind.
func (k EnumKind) Parse(s string) (string, error) {
	for _, n := range k {
		if strings.EqualFold(s, n) {
			return n, nil
		}
	}
	return "", fmt.Errorf("argument(s) must be one of the following: %s", strings.Join(k, ", "))
}

// Values implements Kind.
func (k EnumKind) Values() string { return strings.Join(k, "|") }

// MemoryKind is a number of bytes between Min and Max inclusive, written
// with Redis's units (see ParseMemory); its canonical form is the number of
// bytes.
type MemoryKind struct{ Min, Max int64 }

// Memory is the kind of byte sizes between min and max inclusive.
func Memory(min, max int64) MemoryKind { return MemoryKind{min, max} }

// Parse implements Kind.
func (k MemoryKind) Parse(s string) (string, error) {
	n, err := ParseMemory(s)
	if err != nil {
		return "", errors.New("argument must be a memory value")
	}
	if n < k.Min || n > k.Max {
		return "", fmt.Errorf("argument must be between %d and %d inclusive", k.Min, k.Max)
	}
	return strconv.FormatInt(n, 10), nil
}

// Values implements Kind.
func (k MemoryKind) Values() string { return "bytes, or with a unit: 100mb, 1gb" }

// DurationKind is a duration of at least Min: whole seconds ("300", the
// unit redis.conf uses) or a Go duration ("300s", "1m30s", "500ms"). Its
// canonical form is whole seconds when it has no fraction of one.
type DurationKind struct{ Min time.Duration }

// Duration is the kind of durations of at least min.
func Duration(min time.Duration) DurationKind { return DurationKind{min} }

// Parse implements Kind.
func (k DurationKind) Parse(s string) (string, error) {
	d, err := parseDuration(s)
	if err != nil || d < k.Min {
		return "", fmt.Errorf("argument must be a duration of at least %s, in seconds or with a unit (300, 300s, 500ms)", k.Min)
	}
	if d%time.Second == 0 {
		return strconv.FormatInt(int64(d/time.Second), 10), nil
	}
	return d.String(), nil
}

// Values implements Kind.
func (k DurationKind) Values() string { return "seconds, or with a unit: 300s, 500ms" }

func parseDuration(s string) (time.Duration, error) {
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		if n > math.MaxInt64/int64(time.Second) || n < math.MinInt64/int64(time.Second) {
			return 0, errors.New("overflow")
		}
		return time.Duration(n) * time.Second, nil
	}
	return time.ParseDuration(s)
}

// TextKind is any string Check accepts (every string if Check is nil).
type TextKind struct {
	Check func(string) error
}

// Text is the kind of strings that check accepts; nil accepts any.
func Text(check func(string) error) TextKind { return TextKind{check} }

// Parse implements Kind.
func (k TextKind) Parse(s string) (string, error) {
	if k.Check != nil {
		if err := k.Check(s); err != nil {
			return "", err
		}
	}
	return s, nil
}

// Values implements Kind.
func (TextKind) Values() string { return "text" }

// CheckedKind is a Kind whose values check further refuses.
type CheckedKind struct {
	Kind
	check func(v string) error
}

// Checked returns k with the values check refuses taken out; check gets
// the canonical form.
func Checked(k Kind, check func(string) error) CheckedKind { return CheckedKind{k, check} }

// Parse implements Kind.
func (k CheckedKind) Parse(s string) (string, error) {
	v, err := k.Kind.Parse(s)
	if err != nil {
		return "", err
	}
	if err := k.check(v); err != nil {
		return "", err
	}
	return v, nil
}
