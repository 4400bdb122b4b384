package main

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// receive waits for one message on ps (a hang guard, not a timing).
func receive(t *testing.T, ps *redis.PubSub, what string) *redis.Message {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	m, err := ps.ReceiveMessage(ctx)
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	return m
}

func subscribed(t *testing.T, ps *redis.PubSub) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := ps.Receive(ctx); err != nil {
		t.Fatal(err)
	}
}

// TestClusterPubSubAcrossNodes: in a mixed cluster a PUBLISH on any node
// reaches the subscribers of every node, Shoal's and redis-server's, over
// the bus (PUBLISH's reply counts the node's own receivers, as Redis's);
// an SPUBLISH on a shard's primary reaches a subscriber of its replica
// (PUBLISHSHARD), which serves SSUBSCRIBE without READONLY.
func TestClusterPubSubAcrossNodes(t *testing.T) {
	skipClusterOnGnet(t)
	primaries := []*clusterNode{startShoalNode(t, ""), startRedisNode(t), startShoalNode(t, "")}
	createCluster(t, primaries)
	waitClusterOK(t, primaries)
	replica := startShoalNode(t, "")
	addReplica(t, primaries[0], replica, cli(t, primaries[2].addr, "CLUSTER", "MYID"))
	all := append(append([]*clusterNode{}, primaries...), replica)
	waitNodeRole(t, all, cli(t, replica.addr, "CLUSTER", "MYID"), cli(t, primaries[2].addr, "CLUSTER", "MYID"), all)
	waitClusterOK(t, all)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute) // a hang guard
	defer cancel()

	clients := make([]*redis.Client, len(all))
	subs := make([]*redis.PubSub, len(all))
	for i, n := range all {
		clients[i] = redis.NewClient(&redis.Options{Addr: n.addr})
		defer clients[i].Close()
		subs[i] = clients[i].Subscribe(ctx, "news")
		defer subs[i].Close()
		subscribed(t, subs[i])
	}
	for from, n := range all {
		msg := "from " + n.addr
		got, err := clients[from].Publish(ctx, "news", msg).Result()
		if err != nil || got != 1 {
			t.Fatalf("PUBLISH on %s = %d, %v; want 1 (its own subscriber)", n.addr, got, err)
		}
		for i, ps := range subs {
			if m := receive(t, ps, "PUBLISH on "+n.addr+" to the subscriber of "+all[i].addr); m.Channel != "news" || m.Payload != msg {
				t.Fatalf("the subscriber of %s got %q on %q, want %q", all[i].addr, m.Payload, m.Channel, msg)
			}
		}
	}

	// "{foo}" hashes to slot 12182, the third primary's.
	ss := clients[3].SSubscribe(ctx, "{foo}")
	defer ss.Close()
	subscribed(t, ss)
	if got, err := clients[2].SPublish(ctx, "{foo}", "sharded").Result(); err != nil || got != 0 {
		t.Fatalf("SPUBLISH on the shard's primary = %d, %v; want 0 (no subscriber of its own)", got, err)
	}
	if m := receive(t, ss, "SPUBLISH to the replica's SSUBSCRIBE"); m.Channel != "{foo}" || m.Payload != "sharded" {
		t.Fatalf("the replica's shard subscriber got %q on %q", m.Payload, m.Channel)
	}
}
