package eventloop

// Reserve announces work that another goroutine will hand to c later with
// ExecuteReserved: until that has run, a graceful close of c (Conn.Close,
// the peer's half-close, Server.Shutdown) waits, as it waits for an
// Execute already queued. A handler that answers only once something
// elsewhere completes (a disk sync, a backend call) reserves in OnTraffic,
// so a connection the peer or a shutdown closes still gets that answer.
// Call it on c's loop goroutine and pair each Reserve that returned nil with
// exactly one ExecuteReserved. It returns ErrConnClosed once c is closed.
func (c *Conn) Reserve() error {
	l := c.loop
	l.mu.Lock()
	defer l.mu.Unlock()
	if c.isClosed() {
		return ErrConnClosed
	}
	c.queued.Add(1)
	return nil
}

// ExecuteReserved is Execute for work announced by Reserve: it queues fn to
// run on c's loop and settles the reservation. Any goroutine may call it.
// If c failed meanwhile (it was not closed gracefully), fn does not run.
func (c *Conn) ExecuteReserved(fn func(c *Conn)) error {
	err := c.loop.enqueue(task{kind: taskExecute, c: c, fn: fn})
	// The queued task now stands for the reservation (or nothing will
	// run): either way the reservation's own count goes.
	c.queued.Add(-1)
	if err == nil {
		return nil
	}
	// c cannot wait for the reservation any more; wake the loop in case a
	// close was waiting for it.
	c.loop.wake()
	return err
}
