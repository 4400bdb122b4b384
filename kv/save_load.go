package kv

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"time"

	"github.com/shoalkv/shoal/rdb"
	"github.com/shoalkv/shoal/repl"
	"github.com/shoalkv/shoal/store"
)

// LoadStats describes a snapshot loaded at startup.
type LoadStats struct {
	Keys    int64 // keys loaded
	Expired int64 // keys skipped because their time had passed
	Libs    int   // function libraries loaded
	Version int   // the file's RDB version
	Bytes   int64

	// The replication aux fields, as Redis 7.0 writes them in a file a
	// replica saves and in a full sync's payload: the history the data
	// set follows (ReplID "" when absent), the offset in it, and the
	// database the primary's stream had selected at that offset.
	ReplID       string
	ReplOffset   int64
	ReplStreamDB int
}

// LoadRDB loads the snapshot at path into an empty keyspace, before
// serving: every database, expiries, function libraries. Keys whose expiry
// has passed are skipped, as a primary does. A file that cannot be read
// whole is an error naming the byte offset and the reason (*rdb.CorruptError
// unwraps from it); what was loaded before it stays, for the caller to
// discard by not serving.
func (h *Handler) LoadRDB(path string) (LoadStats, error) {
	st, err := h.loadRDB(path)
	if err == nil {
		h.repl.fromFile = st // a replica's history, resumed at Boot (repl_save.go)
	}
	return st, err
}

// loadRDB is LoadRDB, for startup and for a full sync's payload.
func (h *Handler) loadRDB(path string) (LoadStats, error) {
	var st LoadStats
	f, err := os.Open(path)
	if err != nil {
		return st, err
	}
	defer f.Close()
	r, err := rdb.NewReader(bufio.NewReaderSize(f, 1<<20))
	if err != nil {
		return st, err
	}
	st.Version = r.Version()
	if err := h.loadRecords(r, &st); err != nil {
		return st, err
	}
	st.Bytes = r.Offset()
	s := h.snapshots()
	s.loadedKeys.Store(st.Keys)
	s.loadedExpired.Store(st.Expired)
	return st, nil
}

// loadRecords loads every record r has left into the databases: keys
// (those whose expiry has passed are skipped and counted), function
// libraries. It stops at the first record that cannot be read or stored.
func (h *Handler) loadRecords(r *rdb.Reader, st *LoadStats) error {
	loader := &client{h: h, proto: 2, authed: true, valueDigits: 1}
	loader.parser.Limits = &h.opts.Limits
	now := time.Now().UnixMilli()
	var db *store.Store
	for {
		rec, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err
		}
		switch rec.Kind {
		case rdb.RecordAux:
			st.aux(rec)
		case rdb.RecordSelectDB:
			if rec.DB >= len(h.dbs) {
				return &rdb.CorruptError{Offset: rec.Offset,
					Reason: fmt.Sprintf("the file has database %d, more than the %d databases configured (databases)", rec.DB, len(h.dbs))}
			}
			db = h.db(rec.DB)
		case rdb.RecordFunction:
			loader.out = loader.out[:0]
			h.dispatch(loader, [][]byte{[]byte("FUNCTION"), []byte("LOAD"), rec.Function})
			if len(loader.out) > 0 && loader.out[0] == '-' {
				return &rdb.CorruptError{Offset: rec.Offset, Reason: "a function library that does not load: " + string(loader.out[1:len(loader.out)-2])}
			}
			st.Libs++
		case rdb.RecordKey:
			if db == nil {
				db = h.db(0)
			}
			if at := rec.Meta.ExpireAt; at != 0 && at <= now {
				st.Expired++
				continue
			}
			if err := loadKey(db, rec); err != nil {
				return &rdb.CorruptError{Offset: rec.Offset, Reason: fmt.Sprintf("key %q: %v", rec.Key, err)}
			}
			st.Keys++
		}
	}
	return nil
}

// aux takes the replication aux fields of the file; others are skipped,
// as Redis skips the fields it does not know.
func (st *LoadStats) aux(rec *rdb.Record) {
	v := string(rec.AuxValue)
	switch string(rec.AuxKey) {
	case "repl-id":
		if len(v) == repl.IDLen {
			st.ReplID = v
		}
	case "repl-offset":
		st.ReplOffset, _ = strconv.ParseInt(v, 10, 64)
	case "repl-stream-db":
		st.ReplStreamDB, _ = strconv.Atoi(v)
	}
}

// loadKey stores one key of the file.
func loadKey(db *store.Store, rec *rdb.Record) error {
	key, at := rec.Key, rec.Meta.ExpireAt
	obj, need, err := objectOf(&rec.Value)
	if err != nil {
		return err
	}
	if obj == nil {
		_, _, written, err := db.Set(nil, key, rec.Value.Str, store.SetOptions{Mode: store.SetNX, ExpireAt: at})
		if err == nil && !written {
			err = errDuplicateKey
		}
		return err
	}
	keys := [1][]byte{key}
	err = db.Tx(keys[:], need, func(t *store.Tx) error {
		if t.Kind(0) != store.KindNone {
			return errDuplicateKey
		}
		return t.Put(0, obj)
	})
	if err == nil && at != 0 {
		db.Expire(key, at, store.ExpireAlways)
	}
	return err
}

// errDuplicateKey: a key the file holds twice, which Redis refuses too.
var errDuplicateKey = errors.New("the key appears twice in its database")

// loadSyncPayload replaces the data set with the snapshot at path, the
// payload of a full sync from a primary. The file is read through once
// first, so a snapshot that is cut short or corrupt leaves the old data
// set in place; then, with every loop stopped (clients wait, as Redis's
// answer -LOADING), the databases and function libraries are emptied and
// the file is loaded. With an append-only file attached, a rewrite then
// records the new data set, as Redis restarts its AOF after a sync.
func (h *Handler) loadSyncPayload(path string) (LoadStats, error) {
	if err := checkRDBFile(path); err != nil {
		return LoadStats{}, err
	}
	stopped := h.stopWorld(nil)
	for _, i := range h.madeIndexes() {
		if s := h.existingDB(i); s != nil {
			s.Flush()
		}
	}
	flusher := &client{h: h, proto: 2, authed: true, valueDigits: 1}
	flusher.parser.Limits = &h.opts.Limits
	h.dispatch(flusher, [][]byte{[]byte("FUNCTION"), []byte("FLUSH")})
	st, err := h.loadRDB(path)
	h.resumeWorld(nil, stopped)
	if err != nil {
		return st, err
	}
	if h.aof != nil {
		if err := h.startRewrite(true); err != nil {
			h.rw.scheduled.Store(true)
			h.opts.Logger.Warn("after the sync from the primary, the append-only file rewrite is scheduled", "reason", err)
		}
	}
	return st, nil
}

// checkRDBFile reads the snapshot at path through, to its checksum,
// without loading it.
func checkRDBFile(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	r, err := rdb.NewReader(bufio.NewReaderSize(f, 1<<20))
	if err != nil {
		return err
	}
	for {
		if _, err := r.Next(); errors.Is(err, io.EOF) {
			return nil
		} else if err != nil {
			return err
		}
	}
}
