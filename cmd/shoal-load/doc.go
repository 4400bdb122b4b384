// Command shoal-load is a load generator for RESP servers (redis-server, shoal, and the
// baselines under benchmark/), and with -proto http or -proto frame for shoal's HTTP and
// frame fronts (--http-port, --frame-port), so one harness compares the protocols. Over
// HTTP a 404 is a miss and other 4xx/5xx statuses are errors of that kind; frames have
// no incr.
//
// It runs in one of two modes:
//
//   - Closed loop (the default, like redis-benchmark): every connection writes a batch of
//     -P requests with one write, reads the -P replies, and repeats. Throughput is whatever
//     the server sustains; latency is measured from the batch's write to each reply.
//   - Open loop (-rate N): requests are sent on a fixed schedule of N requests per second
//     across all connections, whether or not replies have come back. Each request's latency
//     is measured from its intended send time, so a server that stalls cannot hide the
//     requests that queued up behind the stall (coordinated omission).
//
// Latencies go into HdrHistogram histograms (nanosecond resolution, 3 significant digits).
// The final report is a table, or JSON with -json. While running, a progress line (elapsed,
// requests/s, p99 so far) is redrawn in place on a terminal and printed as plain lines
// otherwise; with -progress 0 only the "measuring" and "done" marker lines are printed to
// stderr, which benchmark/cmd/compare uses to time its /proc samples.
//
// Examples:
//
//	shoal-load -addr 127.0.0.1:6379 -c 50 -P 16 -d 10s -ratio 9:1
//	shoal-load -addr 127.0.0.1:6379 -c 50 -rate 50000 -d 10s -t get -json
//	shoal-load -c 20000 -src 127.0.0.1,127.0.0.2,127.0.0.3 -t ping -d 30s
//	shoal-load -proto http -addr 127.0.0.1:8080 -c 50 -P 16 -d 10s -t get
//
// The client is built so it is not the bottleneck: one goroutine per connection (two in
// open loop), requests copied from pre-encoded templates with only the key digits patched,
// replies skipped in place in a reusable read buffer, and no allocation per request.
package main
