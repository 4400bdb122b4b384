package rdb

import (
	"encoding/binary"
	"io"
	"strconv"
)

// Writer writes an RDB file: NewWriter, WriteAux, then for each database
// SelectDB and its keys (WriteKey), WriteFunction for function libraries,
// and Close, which ends the file with EOF and the checksum. The header is
// written before the first record. Output is buffered; the first error
// from the underlying writer is kept and returned by every later call.
//
// A Writer is not safe for concurrent use.
type Writer struct {
	w       io.Writer
	enc     *encoder
	buf     []byte
	crc     uint64
	written int64
	started bool
	err     error
}

// flushAt is the buffered size at which Writer writes out.
const flushAt = 64 << 10

// NewWriter returns a Writer of a version 10 file to w.
func NewWriter(w io.Writer, o Options) *Writer {
	return &Writer{w: w, enc: newEncoder(o)}
}

// begin starts a record, writing the header first if needed.
func (w *Writer) begin() {
	if !w.started {
		w.started = true
		w.buf = append(w.buf, "REDIS0010"...)
	}
}

// end finishes a record: writes out the buffer when it is big enough.
func (w *Writer) end() error {
	if w.err == nil && len(w.buf) >= flushAt {
		w.flush()
	}
	return w.err
}

func (w *Writer) flush() {
	if w.err != nil || len(w.buf) == 0 {
		return
	}
	if !w.enc.opts.NoChecksum {
		w.crc = crcUpdate(w.crc, w.buf)
	}
	n, err := w.w.Write(w.buf)
	w.written += int64(n)
	w.err = err
	w.buf = w.buf[:0]
}

// Written is the number of bytes written to the underlying writer so far.
func (w *Writer) Written() int64 { return w.written }

// WriteAux writes an auxiliary field. Redis 7.0 writes redis-ver,
// redis-bits, ctime, used-mem, (for replication) repl-stream-db, repl-id,
// repl-offset, and aof-base; a reader skips those it does not know.
func (w *Writer) WriteAux(key, value string) error {
	if w.err != nil {
		return w.err
	}
	w.begin()
	w.buf = append(w.buf, opAux)
	w.buf = w.enc.appendString(w.buf, []byte(key))
	w.buf = w.enc.appendString(w.buf, []byte(value))
	return w.end()
}

// WriteAuxInt writes an auxiliary field whose value is an integer.
func (w *Writer) WriteAuxInt(key string, value int64) error {
	return w.WriteAux(key, strconv.FormatInt(value, 10))
}

// SelectDB starts database db's keys, of which there are keys, expires
// with a TTL (the RESIZEDB hint). Redis skips empty databases.
func (w *Writer) SelectDB(db, keys, expires int) error {
	if w.err != nil {
		return w.err
	}
	w.begin()
	w.buf = append(w.buf, opSelectDB)
	w.buf = appendLen(w.buf, uint64(db))
	w.buf = append(w.buf, opResizeDB)
	w.buf = appendLen(w.buf, uint64(keys))
	w.buf = appendLen(w.buf, uint64(expires))
	return w.end()
}

// WriteKey writes one key with its expiry, LRU or LFU information and
// value. An empty collection is refused (ErrEmptyValue), and so are a
// sorted set with a NaN score and a value whose slices do not pair up.
func (w *Writer) WriteKey(key []byte, v *Value, m KeyMeta) error {
	if w.err != nil {
		return w.err
	}
	w.begin()
	mark := len(w.buf)
	if m.ExpireAt != 0 {
		w.buf = append(w.buf, opExpireTimeMS)
		w.buf = binary.LittleEndian.AppendUint64(w.buf, uint64(m.ExpireAt))
	}
	if m.HasIdle {
		w.buf = append(w.buf, opIdle)
		w.buf = appendLen(w.buf, uint64(max(m.Idle, 0)))
	}
	if m.HasFreq {
		w.buf = append(w.buf, opFreq, m.Freq)
	}
	typeAt := len(w.buf)
	w.buf = append(w.buf, 0) // the type, known once the value is encoded
	w.buf = w.enc.appendString(w.buf, key)
	var typ byte
	var err error
	w.buf, typ, err = w.enc.appendValue(w.buf, v)
	if err != nil {
		w.buf = w.buf[:mark] // nothing of the key is written
		return err
	}
	w.buf[typeAt] = typ
	return w.end()
}

// WriteFunction writes a function library (FUNCTION2): its source code,
// as FUNCTION LOAD received it.
func (w *Writer) WriteFunction(code []byte) error {
	if w.err != nil {
		return w.err
	}
	w.begin()
	w.buf = append(w.buf, opFunction2)
	w.buf = w.enc.appendString(w.buf, code)
	return w.end()
}

// Close ends the file (EOF and the checksum, zero with NoChecksum) and
// writes out what is buffered. It does not close the underlying writer.
func (w *Writer) Close() error {
	if w.err != nil {
		return w.err
	}
	w.begin()
	w.buf = append(w.buf, opEOF)
	w.flush()
	if w.err != nil {
		return w.err
	}
	w.buf = binary.LittleEndian.AppendUint64(w.buf, w.crc) // zero when not computed
	w.flush()
	return w.err
}
