package slowconsumer

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// readRSS returns pid's resident set in bytes (VmRSS in /proc/PID/status).
func readRSS(pid int) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			if err != nil {
				return 0, fmt.Errorf("/proc/%d/status: VmRSS %q: %w", pid, v, err)
			}
			return kb << 10, nil
		}
	}
	return 0, fmt.Errorf("/proc/%d/status has no VmRSS", pid)
}

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
