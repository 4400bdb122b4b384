//go:build darwin || freebsd

package eventloop

import (
	"golang.org/x/sys/unix"
)

// wakeIdent is the EVFILT_USER identifier used to wake the loop; it lives in
// its own filter namespace, so it cannot collide with a descriptor.
const wakeIdent = 0

// poller is a kqueue instance. Read and write interest are separate filters,
// kept registered and switched with EV_ENABLE/EV_DISABLE, which behaves like
// level-triggered epoll. Waking uses EVFILT_USER (darwin and FreeBSD both have
// it), so no pipe is needed.
//
// Owned by one goroutine (its loop or the acceptor) except wake, which any
// goroutine may call.
type poller struct {
	kq      int
	events  []unix.Kevent_t
	changes [2]unix.Kevent_t
}

func openPoller() (*poller, error) {
	kq, err := unix.Kqueue()
	if err != nil {
		return nil, err
	}
	unix.CloseOnExec(kq)
	p := &poller{kq: kq, events: make([]unix.Kevent_t, 256)}
	ev := []unix.Kevent_t{{Ident: wakeIdent, Filter: unix.EVFILT_USER, Flags: unix.EV_ADD | unix.EV_CLEAR}}
	if _, err := unix.Kevent(kq, ev, nil, nil); err != nil {
		unix.Close(kq)
		return nil, err
	}
	return p, nil
}

func (p *poller) set(fd int, read, write bool) error {
	flag := func(on bool) int {
		if on {
			return unix.EV_ADD | unix.EV_ENABLE
		}
		return unix.EV_ADD | unix.EV_DISABLE
	}
	unix.SetKevent(&p.changes[0], fd, unix.EVFILT_READ, flag(read))
	unix.SetKevent(&p.changes[1], fd, unix.EVFILT_WRITE, flag(write))
	_, err := unix.Kevent(p.kq, p.changes[:], nil, nil)
	return err
}

// add registers fd with the given interest.
func (p *poller) add(fd int, read, write bool) error { return p.set(fd, read, write) }

// modify replaces fd's interest.
func (p *poller) modify(fd int, read, write bool) error { return p.set(fd, read, write) }

// wait blocks until events arrive or timeoutMs passes (-1: forever).
func (p *poller) wait(timeoutMs int) (int, error) {
	var ts *unix.Timespec
	if timeoutMs >= 0 {
		t := unix.NsecToTimespec(int64(timeoutMs) * 1e6)
		ts = &t
	}
	n, err := unix.Kevent(p.kq, nil, p.events, ts)
	if err == unix.EINTR {
		return 0, nil
	}
	return n, err
}

// event reports the i-th event of the last wait.
// readableFd reports the descriptor of event i if it is a connection's or
// listener's readiness to read, with no side effect.
func (p *poller) readableFd(i int) (fd int, ok bool) {
	ev := &p.events[i]
	if ev.Filter == unix.EVFILT_USER {
		return -1, false
	}
	return int(ev.Ident), ev.Flags&(unix.EV_EOF|unix.EV_ERROR) != 0 || ev.Filter == unix.EVFILT_READ
}

func (p *poller) event(i int) (fd int, readable, writable, wake bool) {
	ev := &p.events[i]
	if ev.Filter == unix.EVFILT_USER {
		return -1, false, false, true
	}
	fd = int(ev.Ident)
	bad := ev.Flags&(unix.EV_EOF|unix.EV_ERROR) != 0
	readable = bad || ev.Filter == unix.EVFILT_READ
	writable = bad || ev.Filter == unix.EVFILT_WRITE
	return fd, readable, writable, false
}

// wake makes a concurrent or future wait return.
func (p *poller) wake() error {
	ev := []unix.Kevent_t{{Ident: wakeIdent, Filter: unix.EVFILT_USER, Fflags: unix.NOTE_TRIGGER}}
	_, err := unix.Kevent(p.kq, ev, nil, nil)
	return err
}

func (p *poller) close() { unix.Close(p.kq) }
