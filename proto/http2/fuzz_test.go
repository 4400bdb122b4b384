package http2

import (
	"errors"
	"testing"
)

// FuzzParseFrame checks that ParseFrame and every payload parser never
// panic, never take more bytes than given nor return a payload over the
// limit, and refuse only with an *Error.
func FuzzParseFrame(f *testing.F) {
	f.Add(AppendSettings(nil, false, Setting{SettingMaxFrameSize, 1 << 20}))
	f.Add(AppendHeaders(nil, 1, true, true, []byte{0x82, 0x84, 0x86}))
	f.Add(AppendData(nil, 1, false, []byte("x")))
	f.Add(AppendWindowUpdate(nil, 0, 0))
	f.Add(AppendGoAway(nil, 1, ErrCodeProtocol, nil))
	f.Add(AppendPing(nil, false, [8]byte{}))
	f.Add(AppendRSTStream(nil, 3, ErrCodeCancel))
	f.Add(AppendPriority(nil, 3, Priority{StreamDep: 3}))
	f.Add([]byte{0, 0, 2, 0, 8, 0, 0, 0, 1, 5, 0})
	f.Add([]byte(Preface))
	const limit = 1 << 10
	f.Fuzz(func(t *testing.T, b []byte) {
		for len(b) > 0 {
			h, p, n, err := ParseFrame(b, limit)
			if err != nil {
				var e *Error
				if !errors.As(err, &e) || n != 0 {
					t.Fatalf("n=%d err=%v", n, err)
				}
				return
			}
			if n == 0 {
				return
			}
			if n > len(b) || len(p) > limit || len(p) != int(h.Length) {
				t.Fatalf("n=%d len(p)=%d header %+v", n, len(p), h)
			}
			var perr error
			switch h.Type {
			case FrameData:
				_, perr = ParseData(h, p)
			case FrameHeaders:
				_, _, perr = ParseHeaders(h, p)
			case FramePriority:
				_, perr = ParsePriority(h, p)
			case FrameRSTStream:
				_, perr = ParseRSTStream(h, p)
			case FrameSettings:
				var s Settings
				if s, perr = ParseSettings(h, p); perr == nil {
					perr = s.Each(func(Setting) error { return nil })
				}
			case FramePing:
				_, perr = ParsePing(h, p)
			case FrameGoAway:
				_, _, _, perr = ParseGoAway(h, p)
			case FrameWindowUpdate:
				_, perr = ParseWindowUpdate(h, p)
			case FrameContinuation:
				perr = ParseContinuation(h)
			}
			if perr != nil {
				var e *Error
				if !errors.As(perr, &e) {
					t.Fatalf("%v: %v", h.Type, perr)
				}
			}
			b = b[n:]
		}
	})
}
