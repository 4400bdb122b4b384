package kv

// Pub/sub across a cluster (cluster/pubsub.go): PUBLISH and SPUBLISH go
// to the other nodes over the bus, and what they publish reaches this
// node's subscribers here. A PUBLISH's reply counts this node's
// receivers only, as Redis's.

// Deliver implements cluster.Data.
func (h *Handler) Deliver(channel, payload []byte, shard bool) {
	h.publish(nil, channel, payload, shard)
}

// clusterPublish sends a message published here to the other nodes.
func (h *Handler) clusterPublish(channel, payload []byte, shard bool) {
	if h.cluster != nil {
		h.cluster.Publish(channel, payload, shard)
	}
}
