package loadgen

import (
	"testing"

	"github.com/shoalkv/shoal/proto/resp"
)

func TestRESPTemplateIsTheCommandWithItsKey(t *testing.T) {
	const key = "000000000042"
	for _, tc := range []struct {
		op   opKind
		want []string
	}{
		{opGet, []string{"GET", "key:" + key}},
		{opSet, []string{"SET", "key:" + key, "xxx"}},
		{opPing, []string{"PING"}},
		{opIncr, []string{"INCR", "counter:" + key}},
		{opLPush, []string{"LPUSH", "mylist", "xxx"}},
		{opRPush, []string{"RPUSH", "mylist", "xxx"}},
		{opLPop, []string{"LPOP", "mylist"}},
		{opRPop, []string{"RPOP", "mylist"}},
		{opSAdd, []string{"SADD", "myset", "element:" + key}},
		{opSPop, []string{"SPOP", "myset"}},
		{opHSet, []string{"HSET", "myhash", "element:" + key, "xxx"}},
		{opZAdd, []string{"ZADD", "myzset", "0", "element:" + key}},
		{opZPopMin, []string{"ZPOPMIN", "myzset"}},
	} {
		tpl := respProtocol{}.template(tc.op, 3)
		req := append([]byte(nil), tpl.bytes...)
		putKey(req, tpl.keyAt, 42)
		if want := resp.AppendCommand(nil, tc.want...); string(req) != string(want) {
			t.Errorf("%v: request %q, want %q", tc.op, req, want)
		}
	}
}
