package eventloop

import "golang.org/x/sys/unix"

// darwin names TCP_KEEPIDLE TCP_KEEPALIVE.
const tcpKeepIdle = unix.TCP_KEEPALIVE
