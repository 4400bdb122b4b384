// Command slowconsumers measures what slow pub/sub subscribers cost Shoal
// and redis-server 7, side by side, with internal/slowconsumer: the servers'
// resident memory while subscribers that never read fall behind a fast
// publisher, how many of them each server closes and after how many bytes,
// the longest a PUBLISH waited, and the memory left once they are gone.
//
// From the repository root:
//
//	go run ./benchmark/cmd/slowconsumers                       # N = 1, 4, 16
//	go run ./benchmark/cmd/slowconsumers -n 1,4 -out /tmp/sc   # also results.md and results.json
//
// It builds ./cmd/shoal into a temporary directory unless -shoal names a
// binary, and for every round and N starts each server on a free loopback
// port with its defaults (client-output-buffer-limit pubsub 32mb 8mb 60),
// runs one measurement, and stops the server by its PID. The server order
// alternates from one run to the next. The load average at the start is
// printed above the table: on a busy machine the latencies mean little.
package main
