package loadgen

import (
	"testing"

	"github.com/shoalkv/shoal/proto/resp"
)

// benchWorker is a worker with no connection: enough to build and parse batches.
func benchWorker(mix []opWeight, dist string) *worker {
	cfg := &Config{Protocol: "resp", Conns: 1, Pipeline: 16, Keyspace: 100000, ValueSize: 3,
		Dist: dist, ZipfS: 1.01, Mix: mix, Seed: 1}
	st := &runState{cfg: cfg, proto: respProtocol{}, lat: newLatencyShards(1)}
	for op := range numOps {
		st.tpls[op] = st.proto.template(op, cfg.ValueSize)
		st.maxRequestLen = max(st.maxRequestLen, len(st.tpls[op].bytes))
	}
	return newWorker(st, nil, 0)
}

// BenchmarkBuildRequest is the client's CPU per request for encoding: it must not allocate.
func BenchmarkBuildRequest(b *testing.B) {
	for _, bc := range []struct {
		name string
		mix  []opWeight
		dist string
	}{
		{"get/uniform", []opWeight{{opGet, 1}}, "uniform"},
		{"get9set1/zipf", []opWeight{{opGet, 9}, {opSet, 1}}, "zipf"},
	} {
		b.Run(bc.name, func(b *testing.B) {
			w := benchWorker(bc.mix, bc.dist)
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				if i%16 == 0 {
					w.wbuf = w.wbuf[:0]
				}
				w.appendRequest()
			}
		})
	}
}

// BenchmarkReadReply is the client's CPU per reply for parsing a batch of GET replies.
func BenchmarkReadReply(b *testing.B) {
	var batch []byte
	for range 16 {
		batch = resp.AppendBulkString(batch, "xxx")
	}
	batch = resp.AppendError(batch, "WRONGTYPE Operation against a key holding the wrong kind of value")
	p := respProtocol{}
	w := benchWorker([]opWeight{{opGet, 1}}, "uniform")
	b.ReportAllocs()
	b.SetBytes(int64(len(batch)) / 17)
	for b.Loop() {
		for buf := batch; len(buf) > 0; {
			n, kind, err := p.readReply(buf)
			if err != nil {
				b.Fatal(err)
			}
			w.count(kind, 1000)
			buf = buf[n:]
		}
	}
}
