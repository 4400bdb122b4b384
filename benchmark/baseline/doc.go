// Package baseline holds the reference servers Shoal is measured against: the same RESP
// subset (PING, GET, SET, INCR) over the same proto/resp codec and the same Store, so the
// networking model is the only difference.
//
//   - NetServer: one goroutine per connection on package net, a growing read buffer and a
//     bufio.Writer flushed only when no complete command is left in the read buffer. This is
//     what a competent Go user writes.
//   - GnetServer: gnet v2 event loops, all complete commands of one OnTraffic parsed from
//     c.Peek(-1), replies appended to one buffer and sent with one c.Write: gnet's best
//     practice.
//
// Nothing in Shoal imports this package; benchmark/cmd/baseline serves it and
// benchmark/cmd/compare measures it.
package baseline
