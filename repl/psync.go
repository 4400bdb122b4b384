package repl

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// IDLen is the length of a replication ID: 40 hex digits.
const IDLen = 40

// NoID is the replication ID Redis shows for "none" (master_replid2 of a
// node without a previous history).
const NoID = "0000000000000000000000000000000000000000"

// Resync is what a primary answered to PSYNC.
type Resync struct {
	// Full: +FULLRESYNC; a snapshot follows, then the stream from Offset.
	Full bool
	// ID is the primary's replication ID: the one +FULLRESYNC names, or
	// the new one +CONTINUE names ("" when +CONTINUE names none: the
	// history goes on under the ID the replica asked with).
	ID string
	// Offset is +FULLRESYNC's offset: where the stream after the
	// snapshot starts counting.
	Offset int64
}

// ErrNoPSYNC is the reply of a primary that does not know PSYNC (-ERR);
// Redis would fall back to SYNC, which Shoal does not speak.
var ErrNoPSYNC = errors.New("the primary does not support PSYNC")

// ErrTryAgain is a -NOMASTERLINK or -LOADING reply: the primary cannot
// serve a sync now and the replica should retry later.
var ErrTryAgain = errors.New("the primary cannot serve a sync now")

// ParsePSYNCReply reads the primary's one-line answer to PSYNC, without
// its line ending.
func ParsePSYNCReply(line string) (Resync, error) {
	switch {
	case strings.HasPrefix(line, "+FULLRESYNC"):
		f := strings.Fields(line[len("+FULLRESYNC"):])
		if len(f) != 2 || !ValidID(f[0]) {
			return Resync{}, fmt.Errorf("malformed +FULLRESYNC reply %q", truncate(line))
		}
		off, err := strconv.ParseInt(f[1], 10, 64)
		if err != nil || off < 0 {
			return Resync{}, fmt.Errorf("malformed +FULLRESYNC offset in %q", truncate(line))
		}
		return Resync{Full: true, ID: f[0], Offset: off}, nil
	case strings.HasPrefix(line, "+CONTINUE"):
		rest := strings.TrimSpace(line[len("+CONTINUE"):])
		if rest != "" && !ValidID(rest) {
			return Resync{}, fmt.Errorf("malformed +CONTINUE reply %q", truncate(line))
		}
		return Resync{ID: rest}, nil
	case strings.HasPrefix(line, "-NOMASTERLINK"), strings.HasPrefix(line, "-LOADING"):
		return Resync{}, fmt.Errorf("%w: %s", ErrTryAgain, truncate(line[1:]))
	case strings.HasPrefix(line, "-ERR"):
		return Resync{}, fmt.Errorf("%w: %s", ErrNoPSYNC, truncate(line[1:]))
	}
	return Resync{}, fmt.Errorf("unexpected reply to PSYNC: %q", truncate(line))
}

// ValidID reports whether id has the form of a replication ID.
func ValidID(id string) bool {
	if len(id) != IDLen {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return false
		}
	}
	return true
}

// truncate bounds what a reply puts into an error message.
func truncate(s string) string {
	if len(s) > 128 {
		return s[:128] + "..."
	}
	return s
}
