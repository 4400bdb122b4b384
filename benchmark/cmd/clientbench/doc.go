// Command clientbench compares Go clients for a RESP server under the load of
// many goroutines each making one call at a time: Shoal's client (which
// gathers concurrent calls into pipelines), go-redis v9 with its connection
// pool, go-redis v9's AutoPipeline, and rueidis (auto-pipelining), against
// ./cmd/shoal and redis-server, at 1, 10, 100, 1,000 and 10,000 goroutines.
//
// For each cell it reports throughput, the client's CPU per request
// (getrusage of this process, which runs nothing but the clients), the
// server's CPU per request (/proc/PID/stat of the server process) and p50/p99
// latency of single calls. The clients of a cell run back to back in an
// order rotated from one cell to the next, so that a change in the machine's
// load does not always hit the same client.
//
// Usage, from the repository root:
//
//	go run ./benchmark/cmd/clientbench                          # ~4 minutes
//	go run ./benchmark/cmd/clientbench -rounds 3 -duration 3s   # medians of 3
//
// -servers, -ops, -goroutines and -clients choose the cells; -out writes
// the results elsewhere. -cpuprofile, -mutexprofile and -blockprofile
// profile the client process, best over a single cell:
//
//	go run ./benchmark/cmd/clientbench -servers shoal -ops get -goroutines 10000 \
//		-clients shoal-client -out /tmp/cb -cpuprofile cpu.out -mutexprofile mutex.out
//
// Results go to benchmark/results/client/ (results.json, results.md and
// charts).
package main
