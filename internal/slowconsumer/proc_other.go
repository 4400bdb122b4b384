//go:build !linux

package slowconsumer

import "syscall"

func readRSS(int) (int64, error) { return 0, ErrUnsupported }

func recvBufferControl(int) func(network, address string, c syscall.RawConn) error {
	return func(string, string, syscall.RawConn) error { return ErrUnsupported }
}
