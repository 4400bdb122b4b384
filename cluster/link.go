package cluster

import (
	"bufio"
	"errors"
	"io"
	"net"
	"strconv"
	"sync"
	"time"

	"github.com/shoalkv/shoal/eventloop"
)

// A link is one bus connection: outbound ones (outLink) are dialed by the
// cron to every known node and carry our PINGs; inbound ones (inLink) are
// accepted on the bus port and carry the other nodes' PINGs, answered
// with PONGs. Both carry any message type. process sees them through
// this interface.
type link interface {
	// peer returns the node the link belongs to, nil for an inbound link
	// whose sender is not known yet.
	peer() *node
	isInbound() bool
	// send queues a whole message; it never blocks.
	send(b []byte)
	// localIP and remoteIP are the socket's addresses, "" if unknown.
	localIP() string
	remoteIP() string
}

// outLinkQueue bounds the messages waiting for an outbound link's writer;
// past it the link is dropped and redialed, as Redis frees a link whose
// send buffer passes cluster-link-sendbuf-limit.
const outLinkQueue = 1024

// outLink is a connection this node dialed to n's bus port: a goroutine
// that dials and then reads, and one that writes what send queues. The
// framework has no outbound connections yet, so these do not run on the
// event loops.
type outLink struct {
	s      *State
	node   *node // under s.mu
	ctime  int64
	queue  chan []byte
	done   chan struct{}
	once   sync.Once
	mu     sync.Mutex
	conn   net.Conn
	local  string
	remote string
}

func (l *outLink) peer() *node      { return l.node }
func (l *outLink) isInbound() bool  { return false }
func (l *outLink) localIP() string  { return l.local }
func (l *outLink) remoteIP() string { return l.remote }
func (l *outLink) send(b []byte) {
	select {
	case l.queue <- b:
	case <-l.done:
	default:
		l.s.logger.Warn("cluster bus link over its send queue; dropping it", "node", l.node.name, "messages", outLinkQueue)
		l.close()
	}
}

// close ends the link; the reader detaches it from its node.
func (l *outLink) close() {
	l.once.Do(func() {
		close(l.done)
		l.mu.Lock()
		if l.conn != nil {
			l.conn.Close()
		}
		l.mu.Unlock()
	})
}

// connect makes n's outbound link and starts dialing; under s.mu. The
// first message (MEET for a node met by CLUSTER MEET, else PING) is
// queued now so that failure detection starts at once.
func (s *State) connect(n *node) {
	l := &outLink{s: s, node: n, ctime: nowMs(), queue: make(chan []byte, outLinkQueue), done: make(chan struct{})}
	n.link = l
	oldPing := n.pingSent
	typ := uint16(msgPing)
	if n.flags&flagMeet != 0 {
		typ = msgMeet
	}
	s.sendPing(l, typ)
	if oldPing != 0 {
		n.pingSent = oldPing
	}
	n.flags &^= flagMeet
	addr := net.JoinHostPort(n.ip, strconv.Itoa(n.cport))
	go l.run(addr, time.Duration(max(s.nodeTimeout.Load(), 1000))*time.Millisecond)
}

func (l *outLink) run(addr string, timeout time.Duration) {
	s := l.s
	defer func() {
		l.close()
		s.mu.Lock()
		if l.node != nil && l.node.link == l {
			l.node.link = nil
		}
		s.mu.Unlock()
	}()
	conn, err := net.DialTimeout("tcp", addr, timeout)
	if err != nil {
		s.logger.Debug("cluster bus: cannot connect", "addr", addr, "err", err)
		return
	}
	l.mu.Lock()
	l.conn = conn
	select {
	case <-l.done:
		conn.Close()
	default:
	}
	l.mu.Unlock()
	if a, ok := conn.LocalAddr().(*net.TCPAddr); ok {
		l.local = a.IP.String()
	}
	if a, ok := conn.RemoteAddr().(*net.TCPAddr); ok {
		l.remote = a.IP.String()
	}
	go l.write(conn)
	r := bufio.NewReaderSize(conn, 16<<10)
	for {
		msg, err := readMessage(r)
		if err != nil {
			if !errors.Is(err, io.EOF) && !errors.Is(err, net.ErrClosed) {
				s.logger.Warn("cluster bus: dropping link", "addr", addr, "err", err)
			}
			return
		}
		s.mu.Lock()
		ok := s.handle(l, msg)
		s.afterChange()
		deliveries := s.takeDeliveries()
		s.mu.Unlock()
		s.deliver(deliveries)
		if !ok {
			return
		}
	}
}

func (l *outLink) write(conn net.Conn) {
	w := bufio.NewWriterSize(conn, 16<<10)
	for {
		select {
		case <-l.done:
			return
		case b := <-l.queue:
			w.Write(b)
			for more := true; more; {
				select {
				case b = <-l.queue:
					w.Write(b)
				default:
					more = false
				}
			}
			conn.SetWriteDeadline(time.Now().Add(time.Duration(max(l.s.nodeTimeout.Load(), 1000)) * time.Millisecond))
			if err := w.Flush(); err != nil {
				l.close()
				return
			}
		}
	}
}

// readMessage reads one whole message from an outbound link.
func readMessage(r *bufio.Reader) ([]byte, error) {
	head, err := r.Peek(8)
	if err != nil {
		return nil, err
	}
	n, err := frameLen(head)
	if err != nil {
		return nil, err
	}
	b := make([]byte, n)
	if _, err := io.ReadFull(r, b); err != nil {
		return nil, err
	}
	return b, nil
}

// inLink is a connection another node dialed to our bus port, served on
// an event loop by BusHandler. Its fields are the loop's, but for node,
// which is under s.mu.
type inLink struct {
	c      *eventloop.Conn
	node   *node
	ctime  int64
	local  string
	remote string
	out    []byte // replies of the OnTraffic call in progress
}

func (l *inLink) peer() *node      { return l.node }
func (l *inLink) isInbound() bool  { return true }
func (l *inLink) localIP() string  { return l.local }
func (l *inLink) remoteIP() string { return l.remote }
func (l *inLink) send(b []byte)    { l.out = append(l.out, b...) }

// BusHandler returns the eventloop.Handler of the bus port: give it a
// Listener of its own on the native engine.
func (s *State) BusHandler() eventloop.Handler { return busHandler{s} }

type busHandler struct{ s *State }

// OnOpen implements eventloop.OpenHandler.
func (h busHandler) OnOpen(c *eventloop.Conn) {
	l := &inLink{c: c, ctime: nowMs()}
	if a, ok := c.LocalAddr().(*net.TCPAddr); ok {
		l.local = a.IP.String()
	}
	if a, ok := c.RemoteAddr().(*net.TCPAddr); ok {
		l.remote = a.IP.String()
	}
	c.SetContext(l)
	h.s.mu.Lock()
	h.s.inLinks[l] = struct{}{}
	h.s.mu.Unlock()
}

// OnClose implements eventloop.CloseHandler.
func (h busHandler) OnClose(c *eventloop.Conn, _ error) {
	l, _ := c.Context().(*inLink)
	if l == nil {
		return
	}
	h.s.mu.Lock()
	delete(h.s.inLinks, l)
	if l.node != nil && l.node.inbound == l {
		l.node.inbound = nil
	}
	h.s.mu.Unlock()
}

// OnTraffic implements eventloop.Handler: every whole message is
// processed; a message with a bad signature or length drops the link, as
// Redis does.
func (h busHandler) OnTraffic(c *eventloop.Conn, in []byte) int {
	l, _ := c.Context().(*inLink)
	if l == nil {
		return len(in)
	}
	s := h.s
	consumed := 0
	s.mu.Lock()
	defer func() {
		s.afterChange()
		deliveries := s.takeDeliveries()
		s.mu.Unlock()
		s.deliver(deliveries)
		if len(l.out) > 0 {
			c.Write(l.out)
			l.out = l.out[:0]
		}
	}()
	for {
		rest := in[consumed:]
		n, err := frameLen(rest)
		if err != nil {
			s.logger.Warn("Bad message length or signature received from Cluster bus; closing the link", "addr", c.RemoteAddr(), "err", err)
			c.Abort(err)
			return len(in)
		}
		if n == 0 || len(rest) < n {
			return consumed
		}
		consumed += n
		if !s.handle(l, rest[:n:n]) {
			c.Abort(errors.New("cluster bus: link dropped"))
			return len(in)
		}
	}
}
