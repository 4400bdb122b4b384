package kv_test

import (
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/shoalkv/shoal/eventloop"
	"github.com/shoalkv/shoal/internal/redistest"
	"github.com/shoalkv/shoal/kv"
)

// TestPublishReachesTheReplicas: as Redis 7.0 outside a cluster, PUBLISH
// and SPUBLISH enter the replication stream (after the SELECT of the
// publisher's database), so the replica's own subscribers get them.
func TestPublishReachesTheReplicas(t *testing.T) {
	s := startShoal(t, kv.Options{}, eventloop.Options{})
	c := dialRaw(t, s.addr)
	r := syncReplica(t, s.addr, "7777")
	c.Do("SELECT", "2")
	if got := c.Do("PUBLISH", "news", "hello"); got != ":0\r\n" {
		t.Fatalf("PUBLISH: %q", got)
	}
	c.Do("SPUBLISH", "shard", "hi")
	r.expect(t,
		[]string{"SELECT", "2"},
		[]string{"PUBLISH", "news", "hello"},
		[]string{"SPUBLISH", "shard", "hi"},
	)

	// A redis-server replica delivers them to its subscribers.
	_, port, _ := strings.Cut(s.addr, ":")
	replica := redis.NewClient(&redis.Options{Addr: redistest.StartServer(t, "--replicaof", "127.0.0.1", port)})
	defer replica.Close()
	ctx := t.Context()
	deadline := time.Now().Add(30 * time.Second)
	for {
		info, _ := replica.Info(ctx, "replication").Result()
		if strings.Contains(info, "master_link_status:up") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the redis-server replica did not sync: %s", info)
		}
		time.Sleep(20 * time.Millisecond)
	}
	sub := replica.Subscribe(ctx, "news")
	defer sub.Close()
	if _, err := sub.Receive(ctx); err != nil {
		t.Fatal(err)
	}
	c.Do("PUBLISH", "news", "to the replica")
	msg, err := sub.ReceiveTimeout(ctx, 30*time.Second)
	if m, ok := msg.(*redis.Message); err != nil || !ok || m.Channel != "news" || m.Payload != "to the replica" {
		t.Fatalf("the replica's subscriber got %#v, %v", msg, err)
	}
}
