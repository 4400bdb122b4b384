//go:build linux

package eventloop

import (
	"errors"
	"os"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// poller is a level-triggered epoll instance plus an eventfd used to wake it.
//
// Level-triggered is deliberate: the loop reads each ready connection a bounded
// number of times per cycle and relies on epoll to report it again if bytes are
// left, which keeps one flooding peer from starving the others without the loop
// having to remember which connections still hold unread data.
//
// Owned by one goroutine (its loop or the acceptor) except wake, which any
// goroutine may call.
type poller struct {
	epfd   int
	wakefd int
	events []unix.EpollEvent
	file   *os.File        // epfd, registered with the runtime's netpoller
	raw    syscall.RawConn // file's, to park on it
	n      int             // result of the last epoll_wait, for the park callback
	errno  syscall.Errno
}

func openPoller() (*poller, error) {
	epfd, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		return nil, err
	}
	wakefd, err := unix.Eventfd(0, unix.EFD_NONBLOCK|unix.EFD_CLOEXEC)
	if err != nil {
		unix.Close(epfd)
		return nil, err
	}
	p := &poller{epfd: epfd, wakefd: wakefd, events: make([]unix.EpollEvent, 256)}
	if err := p.add(wakefd, true, false); err != nil {
		unix.Close(wakefd)
		unix.Close(epfd)
		return nil, err
	}
	if err := unix.SetNonblock(epfd, true); err != nil {
		unix.Close(wakefd)
		unix.Close(epfd)
		return nil, err
	}
	p.file = os.NewFile(uintptr(epfd), "epoll")
	raw, err := p.file.SyscallConn()
	if err != nil {
		p.close()
		return nil, err
	}
	p.raw = raw
	return p, nil
}

func epollMask(read, write bool) uint32 {
	var m uint32
	if read {
		m |= unix.EPOLLIN | unix.EPOLLRDHUP
	}
	if write {
		m |= unix.EPOLLOUT
	}
	return m
}

// add registers fd with the given interest.
func (p *poller) add(fd int, read, write bool) error {
	ev := unix.EpollEvent{Events: epollMask(read, write), Fd: int32(fd)}
	return unix.EpollCtl(p.epfd, unix.EPOLL_CTL_ADD, fd, &ev)
}

// modify replaces fd's interest. Errors and hang-ups are reported regardless.
func (p *poller) modify(fd int, read, write bool) error {
	ev := unix.EpollEvent{Events: epollMask(read, write), Fd: int32(fd)}
	return unix.EpollCtl(p.epfd, unix.EPOLL_CTL_MOD, fd, &ev)
}

// wait returns the ready events, waiting until some arrive or timeoutMs
// passes (-1: forever). It polls without blocking and, when nothing is
// ready, parks the goroutine on the runtime's netpoller until the epoll
// descriptor becomes readable: a loop blocked in its own epoll_wait would
// sit in a system call, and the runtime would hand its P to another thread
// and take it back on every wake-up.
func (p *poller) wait(timeoutMs int) (int, error) {
	if n, err := p.poll(); n != 0 || err != nil || timeoutMs == 0 {
		return n, err
	}
	if timeoutMs > 0 {
		_ = p.file.SetReadDeadline(time.Now().Add(time.Duration(timeoutMs) * time.Millisecond))
	} else {
		_ = p.file.SetReadDeadline(time.Time{})
	}
	err := p.raw.Read(p.parkPoll)
	if errors.Is(err, os.ErrDeadlineExceeded) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	if p.errno != 0 {
		return 0, p.errno
	}
	return p.n, nil
}

// parkPoll is the RawConn.Read callback: done once events or an error came.
// It must poll even on its first call, right after wait's own empty poll:
// RawConn.Read first clears the descriptor's readiness in the netpoller,
// so an event that arrived in between would otherwise be lost.
func (p *poller) parkPoll(uintptr) bool {
	p.n, p.errno = p.pollRaw()
	return p.n > 0 || p.errno != 0
}

func (p *poller) poll() (int, error) {
	n, e := p.pollRaw()
	if e != 0 {
		return 0, e
	}
	return n, nil
}

// pollRaw is epoll_wait with a zero timeout; it never blocks, so it skips
// the runtime's syscall bookkeeping.
func (p *poller) pollRaw() (int, syscall.Errno) {
	n, _, e := unix.RawSyscall6(unix.SYS_EPOLL_PWAIT, uintptr(p.epfd), uintptr(unsafe.Pointer(&p.events[0])), uintptr(len(p.events)), 0, 0, 0)
	if e == unix.EINTR {
		return 0, 0
	}
	return int(n), e
}

// event reports the i-th event of the last wait. wake is true for the wake
// descriptor, whose counter has then already been reset.
// readableFd reports the descriptor of event i if it is a connection's or
// listener's readiness to read, with no side effect (event drains the wake
// descriptor).
func (p *poller) readableFd(i int) (fd int, ok bool) {
	ev := &p.events[i]
	fd = int(ev.Fd)
	return fd, fd != p.wakefd && ev.Events&(unix.EPOLLERR|unix.EPOLLHUP|unix.EPOLLIN|unix.EPOLLRDHUP) != 0
}

func (p *poller) event(i int) (fd int, readable, writable, wake bool) {
	ev := &p.events[i]
	fd = int(ev.Fd)
	if fd == p.wakefd {
		var buf [8]byte
		_, _ = unix.Read(p.wakefd, buf[:])
		return fd, false, false, true
	}
	// Errors and hang-ups count as both: the read or write that follows sees
	// the error and closes the connection.
	bad := ev.Events&(unix.EPOLLERR|unix.EPOLLHUP) != 0
	readable = bad || ev.Events&(unix.EPOLLIN|unix.EPOLLRDHUP) != 0
	writable = bad || ev.Events&unix.EPOLLOUT != 0
	return fd, readable, writable, false
}

// wake makes a concurrent or future wait return. Callers coalesce: see
// loop.enqueue.
func (p *poller) wake() error {
	one := [8]byte{1, 0, 0, 0, 0, 0, 0, 0}
	for {
		_, err := unix.Write(p.wakefd, one[:])
		if err == unix.EINTR {
			continue
		}
		if err == unix.EAGAIN { // counter saturated: a wake is already pending
			return nil
		}
		return err
	}
}

func (p *poller) close() {
	unix.Close(p.wakefd)
	p.file.Close() // also deregisters epfd from the runtime's netpoller
}
