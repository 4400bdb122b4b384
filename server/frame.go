package server

import (
	"encoding/binary"

	"github.com/shoalkv/shoal/eventloop"
	"github.com/shoalkv/shoal/kv"
	"github.com/shoalkv/shoal/proto/frame"
	"github.com/shoalkv/shoal/store"
)

// The frame front: proto/frame's GET, SET, DEL and PING over h's keyspace.

// errFrameNoAuth is the frame front's answer while a password is set: the
// protocol has no way to present one, so it cannot be a way around AUTH.
const errFrameNoAuth = "NOAUTH a password is set (requirepass) and the frame protocol cannot authenticate; use RESP or HTTP"

// FrameHandler returns an eventloop.Handler serving h's keyspace in
// proto/frame's binary protocol, pipelined, for an eventloop.Listener
// beside the RESP address. GET answers OK with the value or NOT_FOUND, SET
// OK (or ERROR with Redis's OOM text over maxmemory), DEL OK or NOT_FOUND,
// PING OK with its payload. A malformed frame gets an ERROR naming the
// problem, and the connection closes once the replies before it are sent.
//
// The protocol has no authentication, so while requirepass is set every
// connection (and every request, should requirepass be set later) gets an
// ERROR starting with NOAUTH and is closed. Protected mode refuses other
// hosts as RESP does, with its text in an ERROR.
func (h *Handler) FrameHandler() eventloop.Handler {
	f := &frameFront{h: h, kv: h.kv}
	f.ids[frame.OpGet], f.ids[frame.OpSet] = kv.FrontCommandOf("get"), kv.FrontCommandOf("set")
	f.ids[frame.OpDel], f.ids[frame.OpPing] = kv.FrontCommandOf("del"), kv.FrontCommandOf("ping")
	return f
}

// frameFront is the frame front's Handler, shared by every connection of
// its listener; it keeps no per-connection state.
type frameFront struct {
	h   *Handler
	kv  *kv.Handler
	dec frame.Decoder
	ids [frame.OpPing + 1]kv.FrontCommand // the command each opcode is counted as
}

var _ eventloop.OpenHandler = (*frameFront)(nil)

// OnOpen implements eventloop.OpenHandler: protected mode and the password.
func (f *frameFront) OnOpen(c *eventloop.Conn) {
	switch {
	case f.h.refused(c):
		c.SetOutputBuffer(frame.AppendErrorResponse(c.OutputBuffer(), protectedModeText))
	case f.kv.AuthRequired():
		c.SetOutputBuffer(frame.AppendErrorResponse(c.OutputBuffer(), errFrameNoAuth))
	default:
		return
	}
	c.SetContext(frameRefused{})
	_ = c.Close()
}

// frameRefused marks a connection OnOpen refused; its input is dropped.
type frameRefused struct{}

// OnTraffic implements eventloop.Handler: it answers every complete frame
// in `in` and leaves a partial one for the next call.
func (f *frameFront) OnTraffic(c *eventloop.Conn, in []byte) int {
	if c.Context() != nil { // refused in OnOpen, closing
		return len(in)
	}
	batch := f.kv.BeginFrontBatch(c.LoopIndex()) // as RESP batches: no EXEC runs meanwhile
	defer batch.End()
	out := c.OutputBuffer()
	consumed := 0
	var req frame.Request
	for consumed < len(in) {
		n, err := f.dec.DecodeRequest(in[consumed:], &req)
		if err == frame.ErrIncomplete {
			break
		}
		if err != nil {
			c.SetOutputBuffer(frame.AppendErrorResponse(out, err.Error()))
			_ = c.Close()
			return len(in)
		}
		if f.kv.AuthRequired() { // set by CONFIG SET since the connection opened
			c.SetOutputBuffer(frame.AppendErrorResponse(out, errFrameNoAuth))
			_ = c.Close()
			return len(in)
		}
		consumed += n
		start, timer := len(out), batch.Start()
		out = f.serve(&req, out)
		timer.Done(f.ids[req.Op], out[start] == byte(frame.StatusError))
		if len(out) >= int(f.h.flushBytes.Load()) {
			c.SetOutputBuffer(out)
			if c.Flush() != nil {
				return len(in)
			}
			if c.OutputFull() {
				return consumed
			}
			out = c.OutputBuffer()
		}
	}
	c.SetOutputBuffer(out)
	return consumed
}

// serve appends the response to one request.
func (f *frameFront) serve(req *frame.Request, out []byte) []byte {
	if msg := f.kv.FrontDenied(f.ids[req.Op], req.Key); msg != "" { // the default user's ACL rules
		return frame.AppendErrorResponse(out, msg)
	}
	if f.kv.Logging() && (req.Op == frame.OpSet || req.Op == frame.OpDel) {
		return frame.AppendErrorResponse(out, errFrontNotLogged)
	}
	switch req.Op {
	case frame.OpGet:
		start := len(out)
		out = append(out, byte(frame.StatusOK), 0, 0, 0, 0)
		val, found, err := f.kv.Store().Get(out, req.Key)
		switch {
		case err != nil:
			return frame.AppendErrorResponse(out[:start], err.Error())
		case !found:
			return append(out[:start], byte(frame.StatusNotFound), 0, 0, 0, 0)
		case int64(len(val)-start-frame.ResponseHeaderLen) > frame.MaxValueLen:
			return frame.AppendErrorResponse(val[:start], "value too long for a frame")
		}
		binary.BigEndian.PutUint32(val[start+1:], uint32(len(val)-start-frame.ResponseHeaderLen))
		return val
	case frame.OpSet:
		if _, _, _, err := f.kv.Store().Set(nil, req.Key, req.Value, store.SetOptions{}); err != nil {
			return frame.AppendErrorResponse(out, err.Error())
		}
		f.kv.Wrote(f.ids[frame.OpSet], req.Key, false)
		return append(out, byte(frame.StatusOK), 0, 0, 0, 0)
	case frame.OpDel:
		one := [1][]byte{req.Key}
		if f.kv.Store().Del(one[:]) == 0 {
			return append(out, byte(frame.StatusNotFound), 0, 0, 0, 0)
		}
		f.kv.Wrote(f.ids[frame.OpDel], req.Key, false)
		return append(out, byte(frame.StatusOK), 0, 0, 0, 0)
	}
	out, _ = frame.AppendResponse(out, frame.StatusOK, req.Value) // PING; the decoder bounds the value
	return out
}
