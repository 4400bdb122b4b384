//go:build darwin || freebsd

package aof

import "golang.org/x/sys/unix"

// syncData makes a file's data durable: fsync, as Redis's redis_fsync on
// systems without fdatasync in golang.org/x/sys/unix (macOS, FreeBSD).
func syncData(fd int) error { return unix.Fsync(fd) }
