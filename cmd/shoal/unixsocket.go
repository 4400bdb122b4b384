package main

import (
	"fmt"
	"io/fs"
	"os"
	"strconv"
	"syscall"

	"github.com/shoalkv/shoal/config"
)

// checkListening refuses what Redis 7.0 refuses at startup: no place to
// listen ("Configured to not listen anywhere, exiting." for port 0 without
// a tls-port or a unixsocket), and what only the native engine serves: the
// gnet engine serves one address, so a Unix socket there needs port 0 and
// no tls-port.
func checkListening(params *config.Table) error {
	port, tlsPort, unixSocket := params.Int("port"), params.Int("tls-port"), params.Get("unixsocket")
	if port == 0 && tlsPort == 0 && unixSocket == "" {
		return fmt.Errorf("--port 0, no --tls-port and no --unixsocket: configured to not listen anywhere")
	}
	if (port != 0 || tlsPort != 0) && unixSocket != "" && params.Get("engine") == "gnet" {
		return fmt.Errorf("--unixsocket %q with --port %d or --tls-port %d needs --engine native: the gnet engine serves one address (--port 0 serves the socket alone)", unixSocket, port, tlsPort)
	}
	return nil
}

// clearUnixSocket makes way for the Unix socket at path as Redis does
// before binding: a socket file already there is removed, whether left by
// a run that crashed or still served (Redis unlinks it unconditionally).
// Redis would unlink any other file too; Shoal refuses it instead, naming
// it, since a path that is not a socket is a mistake in the configuration,
// not a leftover.
func clearUnixSocket(path string) error {
	info, err := os.Lstat(path)
	if err != nil {
		return nil // nothing there, or bind says why it cannot be created
	}
	if info.Mode().Type() != fs.ModeSocket {
		what := "a " + info.Mode().Type().String() + " file"
		switch {
		case info.Mode().IsRegular():
			what = "a regular file"
		case info.IsDir():
			what = "a directory"
		}
		return fmt.Errorf("--unixsocket %q: the path is %s, not a socket; refusing to replace it", path, what)
	}
	if err := os.Remove(path); err != nil {
		return fmt.Errorf("--unixsocket %q: removing the socket file left there: %w", path, err)
	}
	return nil
}

// startWithSocketMode runs start (which binds the Unix socket) so that the
// socket is created with unixsocketperm's mode, as Redis's chmod right
// after bind leaves it, but with no moment in which a client could connect
// to it under the umask's mode: the umask is set to the mode's complement
// for the bind and restored after. 0 leaves what the umask makes. The
// umask is the process's; nothing else creates files while the server
// starts (the log, the append-only file and the pid file are open already).
func startWithSocketMode(perm string, start func() error) error {
	mode, err := strconv.ParseUint(perm, 8, 32)
	if err != nil || mode == 0 {
		return start() // the settings table has checked it
	}
	old := syscall.Umask(int(0o777 &^ mode))
	defer syscall.Umask(old)
	return start()
}
