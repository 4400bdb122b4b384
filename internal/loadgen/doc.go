// Package loadgen is the load engine of cmd/shoal-load, shared with the 100k-connection
// stress rig's in-container client (benchmark/cmd/rigclient).
//
// It opens connections, drives them in closed loop (batches of Pipeline requests) or open
// loop (Rate requests/s over all connections, each request timed from when it was due, so
// coordinated omission cannot hide a stall), and records latencies in HdrHistograms. See
// cmd/shoal-load's documentation for the model; Run is the whole run in one call.
package loadgen
