package kv_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/shoalkv/shoal/kv"
)

// TestCommandDocsMatchRedis checks the COMMAND DOCS half of kv's command
// table against redis-server 7.0 (the COMMAND INFO half is compared byte for
// byte in the differential tests): for every command and subcommand Shoal
// implements, Redis must know it too, and since, group and complexity must be
// Redis's. The summaries are Shoal's own words and are only checked to be
// there.
func TestCommandDocsMatchRedis(t *testing.T) {
	ctx := context.Background()
	ref, ours := redisAndShoal(t)

	// Commands newer than Redis 7.0, which therefore cannot be compared.
	newer := map[string]bool{"client|setinfo": true}
	// Complexities that are not Redis's because Shoal does the work differently.
	ownComplexity := map[string]string{
		"unlink": "no other thread frees memory: only strings exist, freed in place",
	}
	checked := 0
	var compare func(name string)
	compare = func(name string) {
		want, err := docsOf(ctx, ref, name)
		if newer[name] {
			if err == nil {
				t.Errorf("redis-server knows %s now: compare it", name)
			}
			return
		}
		if err != nil {
			t.Errorf("redis-server: COMMAND DOCS %s: %v", name, err)
			return
		}
		have, err := docsOf(ctx, ours, name)
		if err != nil {
			t.Errorf("shoal: COMMAND DOCS %s: %v", name, err)
			return
		}
		if have["summary"] == "" {
			t.Errorf("COMMAND DOCS %s: no summary", name)
		}
		for _, field := range []string{"since", "group", "complexity"} {
			if field == "complexity" && ownComplexity[name] != "" {
				if have[field] == want[field] {
					t.Errorf("COMMAND DOCS %s complexity is Redis's again; drop the exception (%s)", name, ownComplexity[name])
				}
				continue
			}
			if have[field] != want[field] {
				t.Errorf("COMMAND DOCS %s %s = %q, redis-server says %q", name, field, have[field], want[field])
			}
		}
		checked++
		subs, _ := ours.Do(ctx, "COMMAND", "INFO", name).Slice()
		if len(subs) == 1 {
			if info, ok := subs[0].([]any); ok && len(info) == 10 {
				if list, ok := info[9].([]any); ok {
					for _, sub := range list {
						compare(fmt.Sprint(sub.([]any)[0]))
					}
				}
			}
		}
	}
	for _, name := range kv.CommandNames() {
		compare(name)
	}
	if checked < len(kv.CommandNames())+10 {
		t.Errorf("compared %d commands, want every command and the subcommands of CLIENT, CONFIG and COMMAND", checked)
	}
}

// docsOf returns the string fields of COMMAND DOCS name.
func docsOf(ctx context.Context, c *redis.Client, name string) (map[string]string, error) {
	reply, err := c.Do(ctx, "COMMAND", "DOCS", name).Slice()
	if err != nil {
		return nil, err
	}
	if len(reply) != 2 {
		return nil, fmt.Errorf("reply %v: unknown command", reply)
	}
	fields, ok := reply[1].([]any)
	if !ok {
		return nil, fmt.Errorf("reply %v: not a field list", reply)
	}
	m := make(map[string]string)
	for i := 0; i+1 < len(fields); i += 2 {
		if v, ok := fields[i+1].(string); ok {
			m[fmt.Sprint(fields[i])] = v
		}
	}
	return m, nil
}
