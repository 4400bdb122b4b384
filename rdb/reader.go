package rdb

import (
	"encoding/binary"
	"fmt"
	"io"
)

// RecordKind says what a Record holds.
type RecordKind uint8

// Kinds of records.
const (
	RecordAux      RecordKind = iota + 1 // AuxKey, AuxValue
	RecordSelectDB                       // DB
	RecordResizeDB                       // DBSize, ExpiresSize: hints for the current database
	RecordKey                            // DB, Key, Value, Meta, Type
	RecordFunction                       // Function: a function library's code
)

// Record is one record of a file, as Reader.Next returns it.
type Record struct {
	Kind   RecordKind
	Offset int64 // where the record starts in the input

	AuxKey, AuxValue    []byte
	DB                  int
	DBSize, ExpiresSize uint64
	Key                 []byte
	Value               Value
	Meta                KeyMeta
	Type                byte // the RDB type the value was encoded as (TypeHashListpack, ...)
	Function            []byte
}

// Reader reads an RDB file record by record.
type Reader struct {
	d       decoder
	version int
	rec     Record
	db      int
	done    bool
	err     error // kept: after an error, Next returns it again

	// EmptyKeysSkipped counts keys holding an empty collection, which
	// Redis skips when loading (older Redis versions could write them).
	EmptyKeysSkipped int
}

// maxDB bounds the database number SELECTDB may name (Redis's databases
// setting is an int; the caller refuses what it does not have).
const maxDB = 1<<31 - 1

// NewReader reads the header of an RDB file from r and returns a Reader
// of its records. Versions 1 to 10 are read; a newer version is refused
// with an error wrapping ErrUnsupported.
func NewReader(r io.Reader) (*Reader, error) {
	rd := &Reader{d: decoder{src: newStreamSource(r)}}
	hdr, err := rd.d.src.take(9)
	if err != nil {
		return nil, rd.d.fail(err, "reading the header")
	}
	if string(hdr[:5]) != "REDIS" {
		return nil, &CorruptError{Reason: fmt.Sprintf("the file does not start with REDIS but %q", hdr[:5])}
	}
	v := 0
	for _, c := range hdr[5:] {
		if c < '0' || c > '9' {
			return nil, &CorruptError{Offset: 5, Reason: fmt.Sprintf("version %q is not a number", hdr[5:])}
		}
		v = v*10 + int(c-'0')
	}
	if v < 1 || v > Version {
		return nil, &CorruptError{Offset: 5, Reason: fmt.Sprintf("RDB format version %d: this reader reads versions 1 to %d", v, Version), Err: ErrUnsupported}
	}
	rd.version = v
	return rd, nil
}

// Version is the file's format version.
func (r *Reader) Version() int { return r.version }

// Offset is how many bytes of the input the reader has consumed.
func (r *Reader) Offset() int64 { return r.d.src.offset() }

// Next returns the next record, or io.EOF after the EOF opcode once the
// checksum has been verified (a zero checksum, written with rdbchecksum
// off, is not checked). The record and the memory it points to, its
// Value's included, are reused by the next call: copy what must outlive it.
// Any other error is a *CorruptError.
func (r *Reader) Next() (*Record, error) {
	if r.err != nil {
		return nil, r.err
	}
	rec, err := r.next()
	if err != nil {
		r.err = err
	}
	return rec, err
}

func (r *Reader) next() (*Record, error) {
	if r.done {
		return nil, io.EOF
	}
	r.d.arena.reset()
	rec := &r.rec
	value := rec.Value
	*rec = Record{Value: value, DB: r.db}
	d := &r.d
	for {
		d.at = d.src.offset()
		rec.Offset = d.at
		op, err := d.src.readByte()
		if err != nil {
			return nil, d.fail(err, "reading the next record")
		}
		switch op {
		case opEOF:
			return nil, r.finish()
		case opExpireTime:
			b, err := d.src.take(4)
			if err != nil {
				return nil, d.fail(err, "reading an expiry")
			}
			// Signed, as Redis reads it: a time past 2038 is in the past.
			rec.Meta.ExpireAt = int64(int32(binary.LittleEndian.Uint32(b))) * 1000
			continue
		case opExpireTimeMS:
			b, err := d.src.take(8)
			if err != nil {
				return nil, d.fail(err, "reading an expiry")
			}
			rec.Meta.ExpireAt = int64(binary.LittleEndian.Uint64(b))
			continue
		case opFreq:
			c, err := d.src.readByte()
			if err != nil {
				return nil, d.fail(err, "reading an LFU frequency")
			}
			rec.Meta.Freq, rec.Meta.HasFreq = c, true
			continue
		case opIdle:
			n, err := d.readCount("an LRU idle time")
			if err != nil {
				return nil, err
			}
			rec.Meta.Idle, rec.Meta.HasIdle = int64(min(n, 1<<62)), true
			continue
		case opSelectDB:
			n, err := d.readCount("a database number")
			if err != nil {
				return nil, err
			}
			if n > maxDB {
				return nil, d.fail(nil, "database number %d", n)
			}
			r.db = int(n)
			rec.Kind, rec.DB = RecordSelectDB, r.db
			return rec, nil
		case opResizeDB:
			if rec.DBSize, err = d.readCount("a database size"); err != nil {
				return nil, err
			}
			if rec.ExpiresSize, err = d.readCount("a database's expires size"); err != nil {
				return nil, err
			}
			rec.Kind = RecordResizeDB
			return rec, nil
		case opAux:
			if rec.AuxKey, err = d.readString("an aux field's name"); err != nil {
				return nil, err
			}
			if rec.AuxValue, err = d.readString("an aux field's value"); err != nil {
				return nil, err
			}
			rec.Kind = RecordAux
			return rec, nil
		case opFunction2:
			if rec.Function, err = d.readString("a function library"); err != nil {
				return nil, err
			}
			rec.Kind = RecordFunction
			return rec, nil
		case opModuleAux, opFunction:
			return nil, &CorruptError{Offset: d.at, Reason: "a record of type " + typeName(op) + ", which this reader does not load", Err: ErrUnsupported}
		}
		empty, err := r.readKey(op, rec)
		if err != nil {
			return nil, err
		}
		if empty {
			r.EmptyKeysSkipped++
			rec.Meta = KeyMeta{}
			r.d.arena.reset()
			continue
		}
		return rec, nil
	}
}

// readKey reads a key and its value of type t.
func (r *Reader) readKey(t byte, rec *Record) (empty bool, err error) {
	d := &r.d
	typeAt := d.at
	switch _, known := typeNames[t]; {
	case t == 20 || t == 21:
		return false, &CorruptError{Offset: typeAt, Reason: "a value of type " + typeName(t) + ", which Redis 7.2 and later write in files of version 11", Err: ErrUnsupported}
	case !known || t > TypeStreamListpacks2:
		return false, &CorruptError{Offset: typeAt, Reason: "unknown value type or opcode " + typeName(t)}
	}
	if rec.Key, err = d.readString("a key"); err != nil {
		return false, err
	}
	d.at = d.src.offset()
	if err := d.readValue(t, &rec.Value); err != nil {
		if ce, ok := err.(*CorruptError); ok && ce.Err == ErrUnsupported {
			ce.Offset = typeAt
			ce.Reason = fmt.Sprintf("key %q holds %s", rec.Key, ce.Reason)
		}
		return false, err
	}
	rec.Kind, rec.Type, rec.DB = RecordKey, t, r.db
	return rec.Value.Len() == 0, nil
}

// finish reads and checks the checksum after the EOF opcode.
func (r *Reader) finish() error {
	r.done = true
	if r.version < 5 {
		return io.EOF
	}
	d := &r.d
	sum := d.src.sum()
	d.at = d.src.offset()
	b, err := d.src.take(8)
	if err != nil {
		return d.fail(err, "reading the checksum")
	}
	if want := binary.LittleEndian.Uint64(b); want != 0 && want != sum {
		return &CorruptError{Offset: d.at, Reason: fmt.Sprintf("the checksum is %#016x but the content's is %#016x", want, sum), Err: ErrChecksum}
	}
	return io.EOF
}
