package eventloop

// Reserve announces work that another goroutine will hand to c later with
// ExecuteReserved: until that has run, a graceful close of c (Conn.Close,
// the peer's half-close, Server.Shutdown) waits, as it waits for an
// Execute already queued. A handler that answers only once something
// elsewhere completes (a disk sync, a backend call) reserves in OnTraffic,
// so a connection the peer or a shutdown closes still gets that answer.
// Call it on c's loop goroutine and pair each Reserve that returned nil with
// exactly one ExecuteReserved. It returns ErrConnClosed once c is closed.
//
// On another engine (Options.Engine) Reserve does nothing: ExecuteReserved
// is then Execute, and a graceful close does not wait for it
// (eventloop/gnetengine's documentation lists this among its differences).
func (c *Conn) Reserve() error { return c.eng.connReserve(c) }

// ExecuteReserved is Execute for work announced by Reserve: it queues fn to
// run on c's loop and settles the reservation. Any goroutine may call it.
// If c failed meanwhile (it was not closed gracefully), fn does not run.
func (c *Conn) ExecuteReserved(fn func(c *Conn)) error {
	return c.eng.connExecuteReserved(c, fn)
}

func (l *loop) connReserve(c *Conn) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if c.isClosed() {
		return ErrConnClosed
	}
	c.queued.Add(1)
	return nil
}

func (l *loop) connExecuteReserved(c *Conn, fn func(c *Conn)) error {
	// The reservation's count passes to the task under the loop's lock, so
	// a close never sees the count without the task nor the task counted
	// twice.
	err := l.enqueue(task{kind: taskExecute, c: c, fn: fn, reserved: true})
	if err != nil {
		c.queued.Add(-1) // nothing will run; c is closed or its loop stopped
	}
	return err
}
