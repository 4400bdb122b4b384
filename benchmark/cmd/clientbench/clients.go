package main

import (
	"context"
	"flag"
	"fmt"

	"github.com/redis/go-redis/v9"
	"github.com/redis/rueidis"
	"github.com/shoalkv/shoal/client"
)

// kvClient is the part of a client the workloads use. Get must read the
// value as a user would (into a []byte they may keep).
type kvClient interface {
	Get(ctx context.Context, key string) error
	Set(ctx context.Context, key string, val []byte) error
	Close()
}

var ourConns = flag.Int("conns", 0, "shoal-client's Options.Conns (0: its default)")

// clientNames lists the clients in report order, with how each is made.
var clientNames = []string{"shoal-client", "go-redis", "go-redis-auto", "rueidis"}

var clientDescs = map[string]string{
	"shoal-client":  "github.com/shoalkv/shoal/client, default options (max(2, GOMAXPROCS) connections)",
	"go-redis":      "go-redis v9.23.0, default pool (10 connections per GOMAXPROCS)",
	"go-redis-auto": "go-redis v9.23.0 AutoPipeline() with its default options (blocking face)",
	"rueidis":       "rueidis v1.0.79, default options with DisableCache (auto-pipelining)",
}

func newClient(name, addr string) (kvClient, error) {
	switch name {
	case "shoal-client":
		c, err := client.New(client.Options{Addr: addr, Conns: *ourConns})
		if err != nil {
			return nil, err
		}
		return ours{c}, nil
	case "go-redis":
		return goRedis{rdb: redis.NewClient(&redis.Options{Addr: addr})}, nil
	case "go-redis-auto":
		rdb := redis.NewClient(&redis.Options{Addr: addr})
		ap, err := rdb.AutoPipeline()
		if err != nil {
			rdb.Close()
			return nil, err
		}
		return goRedisAuto{rdb: rdb, ap: ap}, nil
	case "rueidis":
		c, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: []string{addr}, DisableCache: true})
		if err != nil {
			return nil, err
		}
		return rueidisClient{c}, nil
	}
	return nil, fmt.Errorf("unknown client %q (want one of %v)", name, clientNames)
}

type ours struct{ c *client.Client }

func (o ours) Get(ctx context.Context, key string) error {
	_, err := o.c.Get(ctx, key)
	return err
}
func (o ours) Set(ctx context.Context, key string, val []byte) error { return o.c.Set(ctx, key, val) }
func (o ours) Close()                                                { o.c.Close() }

type goRedis struct{ rdb *redis.Client }

func (g goRedis) Get(ctx context.Context, key string) error {
	_, err := g.rdb.Get(ctx, key).Bytes()
	return err
}
func (g goRedis) Set(ctx context.Context, key string, val []byte) error {
	return g.rdb.Set(ctx, key, val, 0).Err()
}
func (g goRedis) Close() { g.rdb.Close() }

type goRedisAuto struct {
	rdb *redis.Client
	ap  *redis.AutoPipeliner
}

func (g goRedisAuto) Get(ctx context.Context, key string) error {
	_, err := g.ap.Get(ctx, key).Bytes()
	return err
}
func (g goRedisAuto) Set(ctx context.Context, key string, val []byte) error {
	return g.ap.Set(ctx, key, val, 0).Err()
}
func (g goRedisAuto) Close() { g.ap.Close(); g.rdb.Close() }

type rueidisClient struct{ c rueidis.Client }

func (r rueidisClient) Get(ctx context.Context, key string) error {
	_, err := r.c.Do(ctx, r.c.B().Get().Key(key).Build()).AsBytes()
	return err
}
func (r rueidisClient) Set(ctx context.Context, key string, val []byte) error {
	return r.c.Do(ctx, r.c.B().Set().Key(key).Value(rueidis.BinaryString(val)).Build()).Error()
}
func (r rueidisClient) Close() { r.c.Close() }
