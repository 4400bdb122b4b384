package kv

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/shoalkv/shoal/rdb"
	"github.com/shoalkv/shoal/store"
)

// Writing a snapshot: the file Redis 7.0 writes (package rdb), to
// temp-<pid>.rdb in the working directory (dir), synced, then renamed to
// dbfilename and the directory synced, so a crash leaves the old file or
// the new one, never a part.

// SaveStats describes a snapshot written.
type SaveStats struct {
	Keys  int64
	Bytes int64
}

// saveSnapshot writes every database to dbfilename. worldStopped tells
// that the caller stopped every loop (SAVE, shutdown): otherwise, on a
// node whose file records its replication history, the data set is taken
// at the instant of the offset recorded (repl_save.go: snapshotAtInstant)
// while writes, and a replica's stream, go on.
func (h *Handler) saveSnapshot(worldStopped bool) (SaveStats, error) {
	var info *replSaveInfo
	if worldStopped {
		info = h.replSaveInfo()
	} else if file, st, ok, err := h.snapshotAtInstant(); ok {
		if err != nil {
			return st, err
		}
		return st, h.writeFileAtomically(file)
	}
	var st SaveStats
	err := h.installSnapshot(func(f *os.File) (err error) {
		st, err = h.writeSnapshot(f, info)
		return err
	})
	return st, err
}

// writeFileAtomically writes a snapshot made in memory to dbfilename.
func (h *Handler) writeFileAtomically(file []byte) error {
	return h.installSnapshot(func(f *os.File) error {
		_, err := f.Write(file)
		return err
	})
}

// installSnapshot has write fill temp-<pid>.rdb, syncs it, renames it to
// dbfilename and syncs the directory; on an error the temp file is
// removed and dbfilename is as it was.
func (h *Handler) installSnapshot(write func(f *os.File) error) error {
	name := h.params.Get("dbfilename")
	tmp := "temp-" + strconv.Itoa(os.Getpid()) + ".rdb"
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		wd, _ := os.Getwd()
		return fmt.Errorf("opening the temp file %s (in %s): %w", tmp, wd, err)
	}
	err = write(f)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, name)
	}
	if err == nil {
		err = syncDir(filepath.Dir(name))
	}
	if err != nil {
		os.Remove(tmp)
		wd, _ := os.Getwd()
		return fmt.Errorf("writing the snapshot to %s (in %s): %w", tmp, wd, err)
	}
	return nil
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// shardSink collects what one shard encodes while its lock is held; it
// is written to the file after the lock is released.
type shardSink struct{ buf []byte }

func (s *shardSink) Write(p []byte) (int, error) {
	s.buf = append(s.buf, p...)
	return len(p), nil
}

// rdbOptions are the writer's options from the settings in use, so each
// value is written in the encoding this server's thresholds give it.
func (h *Handler) rdbOptions() rdb.Options {
	p := h.params
	return rdb.Options{
		NoCompression:          !p.Bool("rdbcompression"),
		NoChecksum:             !p.Bool("rdbchecksum"),
		HashMaxListpackEntries: zeroAsNone(p.Int("hash-max-listpack-entries")),
		HashMaxListpackValue:   zeroAsNone(p.Int("hash-max-listpack-value")),
		SetMaxIntsetEntries:    zeroAsNone(p.Int("set-max-intset-entries")),
		ZSetMaxListpackEntries: zeroAsNone(p.Int("zset-max-listpack-entries")),
		ZSetMaxListpackValue:   zeroAsNone(p.Int("zset-max-listpack-value")),
		ListMaxListpackSize:    int(p.Int("list-max-listpack-size")),
	}
}

// zeroAsNone maps a threshold of 0 to rdb.Options's "none" (negative):
// its zero means the default.
func zeroAsNone(v int64) int {
	if v == 0 {
		return -1
	}
	return int(v)
}

// writeSnapshot writes the file to f: aux fields, function libraries, then
// each database that has keys, shard by shard, each shard at one instant.
func (h *Handler) writeSnapshot(f *os.File, info *replSaveInfo) (SaveStats, error) {
	var st SaveStats
	out := bufio.NewWriterSize(f, 1<<20)
	sink := &shardSink{}
	w := rdb.NewWriter(sink, h.rdbOptions())
	drain := func() error {
		if len(sink.buf) == 0 {
			return nil
		}
		_, err := out.Write(sink.buf)
		sink.buf = sink.buf[:0]
		return err
	}
	_ = w.WriteAux("redis-ver", Version)
	_ = w.WriteAuxInt("redis-bits", strconv.IntSize)
	_ = w.WriteAuxInt("ctime", time.Now().Unix())
	_ = w.WriteAuxInt("used-mem", h.KeyspaceStats().UsedMemory)
	if info != nil {
		info.writeAux(w)
	}
	_ = w.WriteAuxInt("aof-base", 0)
	for _, code := range h.libraryCodes() {
		_ = w.WriteFunction([]byte(code))
	}
	ds := &dumpScratch{}
	var werr error
	for _, d := range h.madeIndexes() {
		s := h.existingDB(d)
		if s == nil {
			continue
		}
		dst := s.Stats()
		if dst.Keys == 0 {
			continue // Redis skips empty databases
		}
		if err := w.SelectDB(d, int(dst.Keys), int(dst.Expires)); err != nil {
			return st, err
		}
		for i := range s.ShardCount() {
			st.Keys += snapshotShard(w, s, i, ds, &werr)
			if werr != nil {
				return st, werr
			}
			if err := drain(); err != nil {
				return st, err
			}
		}
	}
	if err := w.Close(); err != nil {
		return st, err
	}
	if err := drain(); err != nil {
		return st, err
	}
	st.Bytes = w.Written()
	return st, out.Flush()
}

// snapshotShard writes shard i of database s and returns how many keys it
// wrote. The encoding happens under the shard's read lock, into memory.
func snapshotShard(w *rdb.Writer, s *store.Store, i int, ds *dumpScratch, werr *error) int64 {
	var n int64
	write := func(key []byte, at int64) {
		if *werr != nil {
			return
		}
		err := w.WriteKey(key, &ds.v, rdb.KeyMeta{ExpireAt: at})
		if errors.Is(err, rdb.ErrEmptyValue) {
			err = nil // an emptied collection is no key
		} else if err == nil {
			n++
		}
		*werr = err
	}
	s.SnapshotShard(i, func(key, val []byte, at int64) {
		ds.v.Reset()
		ds.v.Kind, ds.v.Str = rdb.KindString, val
		write(key, at)
	}, func(key []byte, o store.Object, at int64) {
		ds.valueOf(o)
		write(key, at)
	})
	ds.v.Reset()
	return n
}
