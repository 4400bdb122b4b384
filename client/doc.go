// Package client is a Go client for Shoal and Redis (RESP2 and RESP3) that
// gathers the calls of many goroutines into pipelines.
//
//	c, err := client.New(client.Options{Addr: "127.0.0.1:6379"})
//	defer c.Close()
//	err = c.Set(ctx, "k", []byte("v"))
//	v, err := c.Get(ctx, "k")              // missing key: errors.Is(err, client.ErrNil)
//	n, err := c.Incr(ctx, "counter")       // int64
//	r, err := c.Do(ctx, "EXPIRE", "k", 10) // any command; reply as Go values
//
// # Batching
//
// A Client keeps Options.Conns connections. A call is encoded by its
// caller and queued on one of them. If that connection is idle (no reply
// outstanding), the caller writes the queue itself at once and, if its
// context cannot end (context.Background), also reads its own reply: a
// sparse call costs what it costs on a connection of its own, with no
// goroutine hand-off and no timer. If the connection is busy, the call just
// joins the queue and the connection's writer goroutine sends everything
// that gathered in one write (at most Options.MaxBatchBytes) as soon as the
// previous write returns. So batches grow with the load by themselves, the
// way a server's smart flush does. Replies are matched to calls in order,
// by the connection's reader goroutine while calls are outstanding. With
// hundreds outstanding on a connection, that goroutine reads the socket
// between yields to the other goroutines instead of waiting in Go's
// network poller, which a scheduler busy with thousands of callers
// consults only every 10 ms.
//
// An idle connection has no read pending. A connection closed by the
// server while idle is noticed by a non-blocking check every second (or
// ReadTimeout/2 if shorter), and by a call that follows a second of
// idleness; a call made when every connection has just been lost waits for
// the first reconnection attempt instead of failing.
//
// # Lifetimes
//
// Get returns a slice the caller owns; see Get for how it is allocated.
// GetInto appends to a buffer of the caller's. Values passed to Set and Do
// are copied before the call returns.
//
// # Cancellation and failures
//
// A call whose context ends returns ctx.Err() at once. If it was not yet
// written it is never sent; if it was, its reply is read and dropped when it
// comes, so the connection stays in step. A connection that fails (the
// server closes it, a protocol error, no reply within Options.ReadTimeout)
// fails every call queued or waiting on it with a *ConnError wrapping the
// cause, and is re-established in the background with exponential backoff,
// repeating AUTH, HELLO and SELECT. While a connection is down calls go to
// the others; when all are down and a reconnection attempt has failed,
// calls fail at once with a *ConnError whose Reconnecting is true.
//
// Server error replies are returned as Error values and leave the
// connection usable.
package client
