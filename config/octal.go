package config

import (
	"errors"
	"fmt"
	"strconv"
)

// OctalKind is a number written in octal between Min and Max inclusive,
// as Redis takes unixsocketperm: "700", "0700" and "755" are modes; the
// canonical form is octal without a leading zero ("0" for none), which is
// what Redis's CONFIG GET reports.
type OctalKind struct{ Min, Max int64 }

// Octal is the kind of octal numbers between min and max inclusive.
func Octal(min, max int64) OctalKind { return OctalKind{min, max} }

// Parse implements Kind, with Redis 7.0's reasons.
func (k OctalKind) Parse(s string) (string, error) {
	n, err := strconv.ParseInt(s, 8, 64)
	if err != nil {
		return "", errors.New("argument couldn't be parsed as an octal number")
	}
	if n < k.Min || n > k.Max {
		return "", fmt.Errorf("argument must be between %o and %o inclusive", k.Min, k.Max)
	}
	return strconv.FormatInt(n, 8), nil
}

// Values implements Kind.
func (k OctalKind) Values() string { return fmt.Sprintf("octal %o..%o", k.Min, k.Max) }
