package kv

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/shoalkv/shoal/rdb"
	"github.com/shoalkv/shoal/store"
)

// LoadStats describes a snapshot loaded at startup.
type LoadStats struct {
	Keys    int64 // keys loaded
	Expired int64 // keys skipped because their time had passed
	Libs    int   // function libraries loaded
	Version int   // the file's RDB version
	Bytes   int64
}

// LoadRDB loads the snapshot at path into an empty keyspace, before
// serving: every database, expiries, function libraries. Keys whose expiry
// has passed are skipped, as a primary does. A file that cannot be read
// whole is an error naming the byte offset and the reason (*rdb.CorruptError
// unwraps from it); what was loaded before it stays, for the caller to
// discard by not serving.
func (h *Handler) LoadRDB(path string) (LoadStats, error) {
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
			return st, err
		}
		switch rec.Kind {
		case rdb.RecordSelectDB:
			if rec.DB >= len(h.dbs) {
				return st, &rdb.CorruptError{Offset: rec.Offset,
					Reason: fmt.Sprintf("the file has database %d, more than the %d databases configured (databases)", rec.DB, len(h.dbs))}
			}
			db = h.db(rec.DB)
		case rdb.RecordFunction:
			loader.out = loader.out[:0]
			h.dispatch(loader, [][]byte{[]byte("FUNCTION"), []byte("LOAD"), rec.Function})
			if len(loader.out) > 0 && loader.out[0] == '-' {
				return st, &rdb.CorruptError{Offset: rec.Offset, Reason: "a function library that does not load: " + string(loader.out[1:len(loader.out)-2])}
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
				return st, &rdb.CorruptError{Offset: rec.Offset, Reason: fmt.Sprintf("key %q: %v", rec.Key, err)}
			}
			st.Keys++
		}
	}
	st.Bytes = r.Offset()
	s := h.snapshots()
	s.loadedKeys.Store(st.Keys)
	s.loadedExpired.Store(st.Expired)
	return st, nil
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
