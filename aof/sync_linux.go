package aof

import "golang.org/x/sys/unix"

// syncData makes a file's data durable: fdatasync, as Redis's redis_fsync
// on Linux (the metadata a later read needs, such as the size, is synced
// with it).
func syncData(fd int) error { return unix.Fdatasync(fd) }
