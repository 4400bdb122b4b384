package config

import (
	"fmt"
	"syscall"
)

// ReservedFDs is what maxclients leaves of the descriptor limit for the
// listeners, logs, files and the runtime, as Redis's
// CONFIG_MIN_RESERVED_FDS.
const ReservedFDs = 32

// MaxClientsRoom returns the most clients the process's descriptor limit
// can hold (the soft limit, which the Go runtime raises to the hard one
// at startup, less ReservedFDs), or an error if the limit cannot be read.
func MaxClientsRoom() (int, error) {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		return 0, err
	}
	return int(max(int64(lim.Cur)-ReservedFDs, 1)), nil
}

// CheckMaxClients refuses a maxclients the descriptor limit cannot hold,
// in Redis's words for CONFIG SET maxclients.
func CheckMaxClients(n int) error {
	room, err := MaxClientsRoom()
	if err != nil || n <= room {
		return nil
	}
	//lint:ignore ST1005 Redis's text, which clients compare
	return fmt.Errorf("The operating system is not able to handle the specified number of clients, try with %d", room)
}
