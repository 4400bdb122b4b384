package slowconsumer

import (
	"fmt"
	"syscall"

	"github.com/shoalkv/shoal/internal/procfs"
)

// readRSS returns pid's resident set in bytes.
func readRSS(pid int) (int64, error) { return procfs.RSS(pid) }

// recvBufferControl returns a net.Dialer.Control that sets SO_RCVBUF before
// connect, when it still decides the window scale the SYN offers.
func recvBufferControl(size int) func(network, address string, c syscall.RawConn) error {
	return func(_, _ string, c syscall.RawConn) error {
		var serr error
		err := c.Control(func(fd uintptr) {
			serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, size)
		})
		if err != nil {
			return err
		}
		if serr != nil {
			return fmt.Errorf("setsockopt SO_RCVBUF %d: %w", size, serr)
		}
		return nil
	}
}
