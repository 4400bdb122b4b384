// Package cluster is Redis Cluster for Shoal: the hash slots of keys
// (KeySlot), the cluster bus that nodes speak to each other (Redis 7.0's
// binary messages: PING, PONG, MEET with gossip sections and the hostname
// extension, FAIL, UPDATE, FAILOVER_AUTH_REQUEST/ACK, MFSTART, PUBLISH and
// PUBLISHSHARD), the node table with its epochs and slot ownership,
// failure detection (PFAIL, then FAIL by a majority of primaries),
// replica failover by election (failover.go), CLUSTER FAILOVER
// (manual.go), pub/sub across nodes (pubsub.go) and the nodes.conf file in
// Redis's format.
//
// A Shoal node speaks the bus exactly as redis-server 7.0 does, so Shoal
// nodes form clusters with each other and with redis-server nodes, and
// redis-cli --cluster, go-redis's ClusterClient and other cluster clients
// use them unchanged.
//
// State is the node's view of the cluster; every field is guarded by its
// mutex. Inbound bus connections are served on the event loops (BusHandler
// is an eventloop.Handler for a second listener); outbound links, which
// the framework cannot dial, are a goroutine pair each (link.go). Package
// kv reads the slot map on every keyed command through Routes, an
// immutable snapshot republished on each change, so the data path takes no
// lock. What the cluster asks of the replication (promote, follow, hold
// the writes) goes through Data on a goroutine of its own (worker.go).
package cluster
