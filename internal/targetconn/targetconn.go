// Package targetconn is the outbound side of MIGRATE: a connection to the
// target server that writes a pipeline and reads one reply line at a
// time, each step within a timeout, as redis-server's synchronous
// connection helpers do, and a cache of such connections (Redis's
// migrate_cached_sockets: at most 64, each closed after 10 s unused). It
// knows nothing of commands; package kv builds the pipeline and reads the
// replies. Keeping the sockets here leaves kv a package of commands over a
// store that imports no network package.
package targetconn

import (
	"bufio"
	"errors"
	"net"
	"os"
	"strconv"
	"sync"
	"syscall"
	"time"
)

const (
	// MaxCached is how many connections a Cache keeps, as Redis.
	MaxCached = 64
	// IdleAfter is how long a cached connection may go unused.
	IdleAfter = 10 * time.Second
	// chunk is the size of each write, as Redis's 64 KiB.
	chunk = 64 << 10
	// lineMax bounds a reply line kept, as Redis's 1024-byte buffer.
	lineMax = 1024
)

// ErrEmptyLine is an empty reply line, which Redis's reader takes for a
// failed read too.
var ErrEmptyLine = errors.New("targetconn: empty reply line")

// Conn is a connection to a target. One goroutine uses it at a time.
type Conn struct {
	c  net.Conn
	rd *bufio.Reader
	// LastDB is the database last selected on the connection by its user;
	// -1 (a new connection) means unknown.
	LastDB int64
	idle   *time.Timer // set while cached
}

// Dial connects to host and port within timeout. The port is read as C's
// atoi reads it, as Redis does ("x" is port 0, which fails).
func Dial(host, port string, timeout time.Duration) (*Conn, error) {
	d := net.Dialer{Timeout: timeout}
	c, err := d.Dial("tcp", net.JoinHostPort(host, strconv.Itoa(Atoi(port))))
	if err != nil {
		return nil, err
	}
	return &Conn{c: c, rd: bufio.NewReaderSize(c, 4096), LastDB: -1}, nil
}

// Write writes p in 64 KiB chunks, each within timeout.
func (c *Conn) Write(p []byte, timeout time.Duration) error {
	for len(p) > 0 {
		n := min(len(p), chunk)
		_ = c.c.SetWriteDeadline(time.Now().Add(timeout))
		if _, err := c.c.Write(p[:n]); err != nil {
			return err
		}
		p = p[n:]
	}
	return nil
}

// ReadLine reads one reply line within timeout, without its CR LF. A
// line longer than Redis keeps is cut, the rest read and dropped, so a
// target cannot make it hold more than 1 KiB.
func (c *Conn) ReadLine(timeout time.Duration) ([]byte, error) {
	_ = c.c.SetReadDeadline(time.Now().Add(timeout))
	var line []byte
	for {
		part, err := c.rd.ReadSlice('\n')
		if room := lineMax - 1 - len(line); room > 0 {
			line = append(line, part[:min(len(part), room)]...)
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if err != nil {
			return nil, err
		}
		break
	}
	for len(line) > 0 && (line[len(line)-1] == '\n' || line[len(line)-1] == '\r') {
		line = line[:len(line)-1]
	}
	if len(line) == 0 {
		return nil, ErrEmptyLine
	}
	return line, nil
}

// Close closes the connection.
func (c *Conn) Close() error { return c.c.Close() }

// IsTimeout reports whether err is a timeout of a read, a write or a dial.
func IsTimeout(err error) bool {
	var ne net.Error
	return errors.Is(err, os.ErrDeadlineExceeded) || errors.As(err, &ne) && ne.Timeout()
}

// RefusedAfterConnect reports whether Redis would have seen the dial error
// err only at its first write: its connect is non-blocking and succeeds
// once the socket turns writable, which a refused or unreachable peer
// makes it. A name that does not resolve, or a timeout, fails the connect
// itself.
func RefusedAfterConnect(err error) bool {
	return errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EHOSTUNREACH)
}

// Atoi is C's atoi: leading blanks, a sign, then digits as far as they
// go; 0 when there are none.
func Atoi(s string) int {
	i := 0
	for i < len(s) && (s[i] == ' ' || s[i] >= '\t' && s[i] <= '\r') {
		i++
	}
	neg := false
	if i < len(s) && (s[i] == '-' || s[i] == '+') {
		neg = s[i] == '-'
		i++
	}
	n := 0
	for ; i < len(s) && s[i] >= '0' && s[i] <= '9' && n < 1<<20; i++ {
		n = n*10 + int(s[i]-'0')
	}
	if neg {
		return -n
	}
	return n
}

// IsLocal reports whether host is an address of this machine: loopback,
// unspecified, or one of its interfaces' (a name is resolved first).
func IsLocal(host string) bool {
	ips := []net.IP{net.ParseIP(host)}
	if ips[0] == nil {
		var err error
		if ips, err = net.LookupIP(host); err != nil {
			return false
		}
	}
	local, _ := net.InterfaceAddrs()
	for _, ip := range ips {
		if ip.IsLoopback() || ip.IsUnspecified() {
			return true
		}
		for _, a := range local {
			if n, ok := a.(*net.IPNet); ok && n.IP.Equal(ip) {
				return true
			}
		}
	}
	return false
}

// Key names a cached connection: its owner's (a process may run several
// servers) to host:port as the command spelled them.
type Key struct {
	Owner any
	Addr  string
}

// Cache keeps idle connections by Key. A connection is taken out while
// one user has it, so no two use one at a time. The zero Cache is ready.
type Cache struct {
	mu sync.Mutex
	m  map[Key]*Conn
}

// Take takes the cached connection for key out of the cache, or returns
// nil.
func (c *Cache) Take(key Key) *Conn {
	c.mu.Lock()
	defer c.mu.Unlock()
	conn := c.m[key]
	if conn != nil {
		delete(c.m, key)
		conn.idle.Stop()
	}
	return conn
}

// Put caches conn for key for IdleAfter. If one is cached for key
// already, conn is closed instead; if the cache is full, another goes.
func (c *Cache) Put(key Key, conn *Conn) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m[key] != nil {
		_ = conn.Close()
		return
	}
	if c.m == nil {
		c.m = make(map[Key]*Conn)
	}
	if len(c.m) >= MaxCached {
		for k, old := range c.m { // a random one, as Redis evicts
			delete(c.m, k)
			old.idle.Stop()
			_ = old.Close()
			break
		}
	}
	c.m[key] = conn
	conn.idle = time.AfterFunc(IdleAfter, func() {
		c.mu.Lock()
		mine := c.m[key] == conn
		if mine {
			delete(c.m, key)
		}
		c.mu.Unlock()
		if mine {
			_ = conn.Close()
		}
	})
}

// Len is how many connections are cached.
func (c *Cache) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.m)
}
