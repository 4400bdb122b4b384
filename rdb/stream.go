package rdb

import (
	"encoding/binary"
)

// Streams, as redis-server 7.0 writes them (STREAM_LISTPACKS_2): the
// nodes, each its master ID (16 bytes, ms and seq big-endian) and its
// listpack as strings; the length, last ID, first ID, greatest deleted ID
// and entries added; then the consumer groups, each its name, last ID,
// entries read, pending entries (raw 16-byte ID, delivery time as 8 bytes
// little-endian ms, delivery count) and consumers (name, seen time, the
// raw IDs of its pending entries). STREAM_LISTPACKS (15, Redis 5 and 6)
// lacks the first ID, deleted ID, entries added and entries read.
//
// The listpacks are passed as they are: checking them is the loader's
// (store.NewStreamFromNodes checks every entry).

// StreamID is a stream entry ID.
type StreamID struct{ Ms, Seq uint64 }

// Stream is a stream value.
type Stream struct {
	Nodes        []StreamNode
	Length       uint64
	LastID       StreamID
	FirstID      StreamID
	MaxDeletedID StreamID
	EntriesAdded uint64
	// V1: read from a STREAM_LISTPACKS value, without FirstID,
	// MaxDeletedID, EntriesAdded and the groups' EntriesRead: the loader
	// derives them as Redis does.
	V1     bool
	Groups []StreamGroup
}

// StreamNode is one node: its master ID and listpack.
type StreamNode struct {
	Master StreamID
	LP     []byte
}

// StreamGroup is a consumer group.
type StreamGroup struct {
	Name        []byte
	LastID      StreamID
	EntriesRead int64 // -1: unknown
	PEL         []StreamPending
	Consumers   []StreamConsumer
}

// StreamPending is an entry of a group's pending entries list.
type StreamPending struct {
	ID            StreamID
	DeliveryTime  int64
	DeliveryCount uint64
}

// StreamConsumer is a consumer, with the IDs of its pending entries.
type StreamConsumer struct {
	Name     []byte
	SeenTime int64
	PEL      []StreamID
}

func appendRawID(dst []byte, id StreamID) []byte {
	dst = binary.BigEndian.AppendUint64(dst, id.Ms)
	return binary.BigEndian.AppendUint64(dst, id.Seq)
}

func rawID(b []byte) StreamID {
	return StreamID{binary.BigEndian.Uint64(b), binary.BigEndian.Uint64(b[8:])}
}

// appendStream appends s as STREAM_LISTPACKS_2.
func (e *encoder) appendStream(dst []byte, s *Stream) []byte {
	dst = appendLen(dst, uint64(len(s.Nodes)))
	var key [16]byte
	for _, nd := range s.Nodes {
		dst = e.appendString(dst, appendRawID(key[:0], nd.Master))
		dst = e.appendString(dst, nd.LP)
	}
	for _, n := range []uint64{s.Length, s.LastID.Ms, s.LastID.Seq, s.FirstID.Ms, s.FirstID.Seq,
		s.MaxDeletedID.Ms, s.MaxDeletedID.Seq, s.EntriesAdded, uint64(len(s.Groups))} {
		dst = appendLen(dst, n)
	}
	for _, g := range s.Groups {
		dst = e.appendString(dst, g.Name)
		dst = appendLen(dst, g.LastID.Ms)
		dst = appendLen(dst, g.LastID.Seq)
		dst = appendLen(dst, uint64(g.EntriesRead))
		dst = appendLen(dst, uint64(len(g.PEL)))
		for _, p := range g.PEL {
			dst = appendRawID(dst, p.ID)
			dst = binary.LittleEndian.AppendUint64(dst, uint64(p.DeliveryTime))
			dst = appendLen(dst, p.DeliveryCount)
		}
		dst = appendLen(dst, uint64(len(g.Consumers)))
		for _, c := range g.Consumers {
			dst = e.appendString(dst, c.Name)
			dst = binary.LittleEndian.AppendUint64(dst, uint64(c.SeenTime))
			dst = appendLen(dst, uint64(len(c.PEL)))
			for _, id := range c.PEL {
				dst = appendRawID(dst, id)
			}
		}
	}
	return dst
}

// readStream reads a stream of type t (15 or 19) into v.
func (d *decoder) readStream(t byte, v *Value) error {
	v.Kind = KindStream
	s := &Stream{V1: t == TypeStreamListpacks}
	v.Stream = s
	n, err := d.readCount("a stream's node count")
	if err != nil {
		return err
	}
	for ; n > 0; n-- {
		key, err := d.readString("a stream node's master ID")
		if err != nil {
			return err
		}
		if len(key) != 16 {
			return d.fail(nil, "a stream node key of %d bytes, not 16", len(key))
		}
		lp, err := d.readString("a stream node's listpack")
		if err != nil {
			return err
		}
		if len(lp) < lpHeaderSize+1 || int(binary.LittleEndian.Uint32(lp)) != len(lp) {
			return d.fail(errLPHeader, "a stream node")
		}
		s.Nodes = append(s.Nodes, StreamNode{Master: rawID(key), LP: lp})
	}
	fields := []*uint64{&s.Length, &s.LastID.Ms, &s.LastID.Seq}
	if !s.V1 {
		fields = append(fields, &s.FirstID.Ms, &s.FirstID.Seq, &s.MaxDeletedID.Ms, &s.MaxDeletedID.Seq, &s.EntriesAdded)
	}
	for _, f := range fields {
		if *f, err = d.readCount("a stream's metadata"); err != nil {
			return err
		}
	}
	groups, err := d.readCount("a stream's group count")
	if err != nil {
		return err
	}
	for ; groups > 0; groups-- {
		var g StreamGroup
		if g.Name, err = d.readString("a consumer group's name"); err != nil {
			return err
		}
		if g.LastID.Ms, err = d.readCount("a group's last ID"); err != nil {
			return err
		}
		if g.LastID.Seq, err = d.readCount("a group's last ID"); err != nil {
			return err
		}
		g.EntriesRead = -1
		if !s.V1 {
			er, err := d.readCount("a group's entries read")
			if err != nil {
				return err
			}
			g.EntriesRead = int64(er)
		}
		pel, err := d.readCount("a group's pending count")
		if err != nil {
			return err
		}
		for ; pel > 0; pel-- {
			b, err := d.src.take(24)
			if err != nil {
				return d.fail(err, "reading a pending entry")
			}
			p := StreamPending{ID: rawID(b), DeliveryTime: int64(binary.LittleEndian.Uint64(b[16:]))}
			if p.DeliveryCount, err = d.readCount("a delivery count"); err != nil {
				return err
			}
			g.PEL = append(g.PEL, p)
		}
		consumers, err := d.readCount("a group's consumer count")
		if err != nil {
			return err
		}
		for ; consumers > 0; consumers-- {
			var c StreamConsumer
			if c.Name, err = d.readString("a consumer's name"); err != nil {
				return err
			}
			b, err := d.src.take(8)
			if err != nil {
				return d.fail(err, "reading a consumer's seen time")
			}
			c.SeenTime = int64(binary.LittleEndian.Uint64(b))
			np, err := d.readCount("a consumer's pending count")
			if err != nil {
				return err
			}
			for ; np > 0; np-- {
				b, err := d.src.take(16)
				if err != nil {
					return d.fail(err, "reading a consumer's pending ID")
				}
				c.PEL = append(c.PEL, rawID(b))
			}
			g.Consumers = append(g.Consumers, c)
		}
		s.Groups = append(s.Groups, g)
	}
	return nil
}
