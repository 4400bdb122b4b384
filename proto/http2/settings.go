package http2

import "encoding/binary"

// SettingID identifies a setting (RFC 9113 section 6.5.2).
type SettingID uint16

// The settings of RFC 9113 section 6.5.2.
const (
	SettingHeaderTableSize      SettingID = 0x1
	SettingEnablePush           SettingID = 0x2
	SettingMaxConcurrentStreams SettingID = 0x3
	SettingInitialWindowSize    SettingID = 0x4
	SettingMaxFrameSize         SettingID = 0x5
	SettingMaxHeaderListSize    SettingID = 0x6
)

// Setting is one identifier and value of a SETTINGS frame.
type Setting struct {
	ID  SettingID
	Val uint32
}

// Valid checks a received setting's value: ENABLE_PUSH 0 or 1,
// INITIAL_WINDOW_SIZE at most 2^31-1 (else FLOW_CONTROL_ERROR),
// MAX_FRAME_SIZE from 16384 to 2^24-1. Unknown settings are valid (and
// ignored, as the RFC requires).
func (s Setting) Valid() error {
	switch s.ID {
	case SettingEnablePush:
		if s.Val > 1 {
			return connError(ErrCodeProtocol, "SETTINGS_ENABLE_PUSH %d, not 0 or 1", s.Val)
		}
	case SettingInitialWindowSize:
		if s.Val > MaxWindow {
			return connError(ErrCodeFlowControl, "SETTINGS_INITIAL_WINDOW_SIZE %d is over %d", s.Val, MaxWindow)
		}
	case SettingMaxFrameSize:
		if s.Val < DefaultMaxFrameSize || s.Val > MaxAllowedFrameSize {
			return connError(ErrCodeProtocol, "SETTINGS_MAX_FRAME_SIZE %d is not from %d to %d", s.Val, DefaultMaxFrameSize, MaxAllowedFrameSize)
		}
	}
	return nil
}

// Settings is a SETTINGS frame's payload, checked to be whole settings.
type Settings []byte

// ParseSettings checks a SETTINGS frame: on stream 0, a multiple of 6
// bytes, empty if it is an acknowledgment. Each setting's value is checked
// by Each.
func ParseSettings(h FrameHeader, payload []byte) (Settings, error) {
	if h.StreamID != 0 {
		return nil, connError(ErrCodeProtocol, "SETTINGS frame on stream %d, not 0", h.StreamID)
	}
	if h.Flags.Has(FlagAck) && len(payload) != 0 {
		return nil, connError(ErrCodeFrameSize, "SETTINGS acknowledgment of %d bytes, not 0", len(payload))
	}
	if len(payload)%6 != 0 {
		return nil, connError(ErrCodeFrameSize, "SETTINGS frame of %d bytes, not a multiple of 6", len(payload))
	}
	return Settings(payload), nil
}

// Len returns the number of settings.
func (s Settings) Len() int { return len(s) / 6 }

// At returns the i'th setting.
func (s Settings) At(i int) Setting {
	b := s[i*6:]
	return Setting{ID: SettingID(binary.BigEndian.Uint16(b)), Val: binary.BigEndian.Uint32(b[2:])}
}

// Each calls fn for each setting in order, after checking it with Valid;
// it returns the first error.
func (s Settings) Each(fn func(Setting) error) error {
	for i := 0; i < s.Len(); i++ {
		st := s.At(i)
		if err := st.Valid(); err != nil {
			return err
		}
		if err := fn(st); err != nil {
			return err
		}
	}
	return nil
}

// AppendSettings appends a SETTINGS frame with settings, or with ack an
// empty acknowledgment.
func AppendSettings(dst []byte, ack bool, settings ...Setting) []byte {
	var f Flags
	if ack {
		f, settings = FlagAck, nil
	}
	dst = AppendFrameHeader(dst, FrameHeader{Length: uint32(6 * len(settings)), Type: FrameSettings, Flags: f})
	for _, s := range settings {
		dst = binary.BigEndian.AppendUint16(dst, uint16(s.ID))
		dst = binary.BigEndian.AppendUint32(dst, s.Val)
	}
	return dst
}
