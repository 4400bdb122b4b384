// Package slowconsumer measures what slow pub/sub consumers cost a
// Redis-compatible server: how much resident memory it spends on subscribers
// that never read, whether and when it closes them (Redis's
// client-output-buffer-limit pubsub class), whether a publisher is held up
// meanwhile, and whether the memory comes back once they are gone.
//
// Run drives one measurement against a running server whose PID it is given:
// N subscribers with a small socket receive buffer SUBSCRIBE to one channel
// and then never read; one publisher PUBLISHes large messages as fast as the
// server accepts them; the server's VmRSS is sampled throughout. A subscriber
// counts as closed by the server when the PUBLISH replies (the number of
// receivers) and PUBSUB NUMSUB stop counting it: its socket cannot show the
// close, since the server's FIN waits behind the bytes the subscriber never
// read.
//
// Both the cmd/shoal tests and benchmark/cmd/slowconsumers, which prints
// Shoal beside redis-server, use it. It reads /proc, so it runs on Linux
// only; elsewhere Run returns ErrUnsupported.
package slowconsumer
