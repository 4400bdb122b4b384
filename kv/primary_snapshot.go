package kv

import (
	"encoding/binary"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/shoalkv/shoal/rdb"
	"github.com/shoalkv/shoal/store"
)

// The snapshot of a full sync, taken without stopping writes.
//
// The snapshot must be the keyspace at the instant T0 at which the
// replica's stream starts. T0 is taken with the loops stopped and every
// stripe locked (fullSync); after it, shards are encoded one at a time,
// each under its stripe: by the snapshot's goroutine in shard order, or,
// when a write reaches a shard not yet encoded, by that write before it
// runs (callLogged, which holds the write's stripes). Either way a shard is
// encoded before any write after T0 touches it, as the append-only file's
// rewrite copies shards (rewrite.go). The parts are then put together in
// the file's order: each database's SELECTDB followed by its keys from
// every shard, and the checksum computed over the whole.
type syncSnapshot struct {
	dbs     []int          // the databases with keys at T0
	stores  []*store.Store // their stores at T0 (SWAPDB and FLUSHALL may replace them after)
	counts  [][2]int       // their key and expiry counts at T0, for SELECTDB
	libs    []string       // the function libraries at T0
	opts    rdb.Options
	copied  []bool     // per shard; element i guarded by stripe i
	parts   [][][]byte // per shard, per database (index in dbs): the encoded keys
	onWrite atomic.Int64

	// The stream at the snapshot's instant: the history and offset it
	// starts from, and the database its next record applies to.
	repl  replSaveInfo
	errMu sync.Mutex
	err   error // the first encoding error, of any shard
}

// newSyncSnapshot records T0's databases; every stripe is held.
func (h *Handler) newSyncSnapshot() *syncSnapshot {
	o := h.rdbOptions()
	sn := &syncSnapshot{libs: h.libraryCodes(), opts: o, copied: make([]bool, len(h.stripes)), parts: make([][][]byte, len(h.stripes))}
	for _, d := range h.madeIndexes() {
		s := h.existingDB(d)
		if s == nil {
			continue
		}
		st := s.Stats()
		if st.Keys == 0 {
			continue // Redis skips empty databases
		}
		sn.dbs = append(sn.dbs, d)
		sn.stores = append(sn.stores, s)
		sn.counts = append(sn.counts, [2]int{int(st.Keys), int(st.Expires)})
	}
	return sn
}

// copyShard encodes shard i of every database of T0, unless done; the
// caller holds stripe i.
func (sn *syncSnapshot) copyShard(i int) error {
	if sn.copied[i] {
		return nil
	}
	sn.copied[i] = true
	opts := sn.opts
	opts.NoChecksum = true // the whole file's is computed at the end
	ds := &dumpScratch{}
	sn.parts[i] = make([][]byte, len(sn.stores))
	for j, s := range sn.stores {
		sink := &shardSink{}
		w := rdb.NewWriter(sink, opts)
		var werr error
		snapshotShard(w, s, i, ds, &werr)
		if werr == nil {
			werr = w.Close()
		}
		if werr != nil {
			sn.errMu.Lock()
			if sn.err == nil {
				sn.err = werr
			}
			sn.errMu.Unlock()
			return werr
		}
		sn.parts[i][j] = recordsOf(sink.buf)
	}
	return nil
}

// recordsOf strips a file's header and its EOF and checksum: what is left
// is its records.
func recordsOf(file []byte) []byte {
	const header, trailer = len("REDIS0010"), 1 + 8
	if len(file) < header+trailer {
		return nil
	}
	return file[header : len(file)-trailer]
}

// syncCopyBeforeWrite encodes the shards of the stripes a write holds that the
// running snapshot has not encoded yet (callLogged, before the write).
func (h *Handler) syncCopyBeforeWrite(stripes []int) {
	sn := h.primary.snapshot.Load()
	if sn == nil {
		return
	}
	for _, i := range stripes {
		if !sn.copied[i] {
			sn.onWrite.Add(1)
			_ = sn.copyShard(i) // an error is kept in sn.err for the snapshot's goroutine
		}
	}
}

// finish encodes the shards no write got to, then puts the file together.
func (h *Handler) finishSnapshot(sn *syncSnapshot) ([]byte, error) {
	for i := range h.stripes {
		h.stripes[i].Lock()
		_ = sn.copyShard(i) // an error is kept in sn.err
		h.stripes[i].Unlock()
	}
	h.primary.snapshot.Store(nil)
	sn.errMu.Lock()
	err := sn.err
	sn.errMu.Unlock()
	if err != nil {
		return nil, err
	}
	// Each stripe was taken once more since each part was written: the
	// parts are visible here.
	head := &shardSink{}
	w := rdb.NewWriter(head, sn.opts)
	_ = w.WriteAux("redis-ver", Version)
	_ = w.WriteAuxInt("redis-bits", strconv.IntSize)
	_ = w.WriteAuxInt("ctime", time.Now().Unix())
	_ = w.WriteAuxInt("used-mem", h.KeyspaceStats().UsedMemory)
	// As Redis's rdbSaveInfoAuxFields for a replication payload: the
	// database the stream has selected at the snapshot's offset, and the
	// history, which a replica that saves the file resumes from.
	sn.repl.writeAux(w)
	_ = w.WriteAuxInt("aof-base", 0)
	for _, code := range sn.libs {
		_ = w.WriteFunction([]byte(code))
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	// One allocation of the file's size, and each part dropped as it is
	// copied: the peak is the file and not twice or thrice it.
	size := len(head.buf) + 9
	for i := range sn.parts {
		for _, part := range sn.parts[i] {
			size += len(part)
		}
	}
	file := make([]byte, 0, size+16*len(sn.dbs))
	file = append(file, head.buf[:len(head.buf)-9]...) // without its EOF and checksum
	for j, d := range sn.dbs {
		sel := &shardSink{}
		sw := rdb.NewWriter(sel, sn.opts)
		if err := sw.SelectDB(d, sn.counts[j][0], sn.counts[j][1]); err != nil {
			return nil, err
		}
		if err := sw.Close(); err != nil {
			return nil, err
		}
		file = append(file, recordsOf(sel.buf)...)
		for i := range sn.parts {
			file = append(file, sn.parts[i][j]...)
			sn.parts[i][j] = nil
		}
	}
	file = append(file, 0xFF) // EOF
	var crc uint64
	if !sn.opts.NoChecksum {
		crc = rdb.CRC64(file)
	}
	return binary.LittleEndian.AppendUint64(file, crc), nil
}
