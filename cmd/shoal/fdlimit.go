package main

import (
	"fmt"
	"log/slog"
	"syscall"
)

// reservedFDs is what maxclients leaves of the descriptor limit for the listener, logs,
// pprof and the runtime, as Redis's CONFIG_MIN_RESERVED_FDS.
const reservedFDs = 32

// capMaxClients lowers maxclients to what the process's descriptor limit can hold, as
// Redis does, and logs when it had to: a server that accepts clients it has no descriptor
// for fails them with EMFILE at accept instead of refusing them with Redis's error.
func capMaxClients(maxClients int, logger *slog.Logger) int {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		logger.Warn("cannot read the descriptor limit; maxclients left as given", "err", err)
		return maxClients
	}
	// The Go runtime has already raised the soft limit to the hard one at startup.
	avail := int64(lim.Cur) - reservedFDs
	if int64(maxClients) <= avail {
		return maxClients
	}
	capped := int(max(avail, 1))
	logger.Warn(fmt.Sprintf("maxclients %d needs %d descriptors but the limit is %d: maxclients reduced to %d",
		maxClients, maxClients+reservedFDs, lim.Cur, capped),
		"requested", maxClients, "nofile", lim.Cur, "maxclients", capped)
	return capped
}
