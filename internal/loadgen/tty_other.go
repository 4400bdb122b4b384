//go:build !linux && !darwin && !freebsd && !netbsd && !openbsd && !dragonfly

package loadgen

// isTerminal reports false where termios is unavailable: progress prints plain lines.
func isTerminal(int) bool { return false }
