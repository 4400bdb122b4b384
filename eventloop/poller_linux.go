//go:build linux

package eventloop

import (
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
		p.close()
		return nil, err
	}
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

// wait blocks until events arrive or timeoutMs passes (-1: forever) and
// returns how many events event(i) can report.
func (p *poller) wait(timeoutMs int) (int, error) {
	n, err := unix.EpollWait(p.epfd, p.events, timeoutMs)
	if err == unix.EINTR {
		return 0, nil
	}
	return n, err
}

// event reports the i-th event of the last wait. wake is true for the wake
// descriptor, whose counter has then already been reset.
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
	unix.Close(p.epfd)
}
