package kv

import "time"

// snapshotInfo writes INFO persistence's fields before the AOF's, with
// Redis 7.0's names and order. Shoal forks no child, so the copy-on-write
// and fork fields are 0; loading is 0 because a snapshot is loaded before
// the port opens.
func (h *Handler) snapshotInfo(field func(k string, v any)) {
	field("loading", 0)
	field("async_loading", 0)
	field("current_cow_peak", 0)
	field("current_cow_size", 0)
	field("current_cow_size_age", 0)
	field("current_fork_perc", "0.00")
	field("current_save_keys_processed", 0)
	field("current_save_keys_total", 0)
	sn := h.snap.Load()
	if sn == nil { // no save yet, nor a cron: Redis's fields at startup
		field("rdb_changes_since_last_save", 0)
		field("rdb_bgsave_in_progress", 0)
		field("rdb_last_save_time", h.start.Unix())
		field("rdb_last_bgsave_status", "ok")
		field("rdb_last_bgsave_time_sec", -1)
		field("rdb_current_bgsave_time_sec", -1)
		field("rdb_saves", 0)
		field("rdb_last_cow_size", 0)
		field("rdb_last_load_keys_expired", 0)
		field("rdb_last_load_keys_loaded", 0)
		return
	}
	s := sn
	started := s.started.Load()
	current := int64(-1)
	if started != 0 {
		current = time.Now().Unix() - started/1000
	}
	field("rdb_changes_since_last_save", s.changesSinceSave())
	field("rdb_bgsave_in_progress", boolInt(started != 0))
	field("rdb_last_save_time", s.lastSave.Load())
	field("rdb_last_bgsave_status", okErr(!s.lastErr.Load()))
	field("rdb_last_bgsave_time_sec", s.lastBGSec.Load())
	field("rdb_current_bgsave_time_sec", current)
	field("rdb_saves", s.saves.Load())
	field("rdb_last_cow_size", 0)
	field("rdb_last_load_keys_expired", s.loadedExpired.Load())
	field("rdb_last_load_keys_loaded", s.loadedKeys.Load())
}
