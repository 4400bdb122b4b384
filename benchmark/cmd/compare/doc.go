// Command compare runs Shoal side by side with redis-server 7, a gnet v2 server and a
// goroutine-per-connection net server on the same RESP workloads, and writes a markdown
// table, raw JSON and PNG charts.
//
// From the module root:
//
//	go run ./benchmark/cmd/compare                             # quick: ~3 minutes
//	go run ./benchmark/cmd/compare -rounds 3 -duration 5s      # full: ~15 minutes
//	go run ./benchmark/cmd/compare -profile                    # also profile shoal
//
// It builds ./cmd/shoal, ./cmd/shoal-load and ./benchmark/cmd/baseline into a temporary
// directory, starts every server on its own loopback port each round, loads the same keys
// into each, and runs every closed-loop workload (GET and SET × 50 and 1,000 connections
// × pipeline depth 1, 16 and 128) on every server, rotating the server order from one
// workload and round to the next so drift in the machine's load spreads evenly. Then an
// open-loop run at one fixed rate measures latency on each. Figures are medians over the
// rounds. See benchmark/README.md for how to read the output.
package main
