package eventloop

import "golang.org/x/sys/unix"

const tcpKeepIdle = unix.TCP_KEEPIDLE
