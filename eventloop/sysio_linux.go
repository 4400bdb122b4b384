//go:build linux

package eventloop

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// readFd and writeFd are read(2) and write(2) on a non-blocking socket.
// They never block, so they skip the runtime's syscall entry and exit
// (unix.RawSyscall): that bookkeeping, and the P hand-offs sysmon makes
// when it finds the loop "in a syscall", cost more than the copy itself
// for small requests.
func readFd(fd int, p []byte) (int, error)  { return rawIO(unix.SYS_READ, fd, p) }
func writeFd(fd int, p []byte) (int, error) { return rawIO(unix.SYS_WRITE, fd, p) }

// rawIO is read(2) or write(2), as trap says, of p on fd.
func rawIO(trap uintptr, fd int, p []byte) (int, error) {
	var ptr unsafe.Pointer
	if len(p) > 0 {
		ptr = unsafe.Pointer(&p[0])
	}
	n, _, e := unix.RawSyscall(trap, uintptr(fd), uintptr(ptr), uintptr(len(p)))
	if e != 0 {
		return 0, e
	}
	return int(n), nil
}

// socketSettled reports whether the peer has acknowledged everything
// written to the socket fd (SIOCOUTQ) and nothing unread waits in it
// (SIOCINQ): closing it then sends a FIN, not a reset, and drops nothing.
func socketSettled(fd int) bool {
	out, err := unix.IoctlGetInt(fd, unix.SIOCOUTQ)
	if err != nil || out != 0 {
		return false
	}
	in, err := unix.IoctlGetInt(fd, unix.SIOCINQ)
	return err == nil && in == 0
}
