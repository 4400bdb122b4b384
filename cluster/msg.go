package cluster

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
)

// The cluster bus's message types (Redis 7.0's CLUSTERMSG_TYPE_*).
const (
	msgPing = iota
	msgPong
	msgMeet
	msgFail
	msgPublish
	msgFailoverAuthRequest
	msgFailoverAuthAck
	msgUpdate
	msgMFStart
	msgModule
	msgPublishShard
	msgTypes // the number of types, for the statistics
)

// msgTypeNames are the names CLUSTER INFO's statistics use.
var msgTypeNames = [msgTypes]string{"ping", "pong", "meet", "fail", "publish", "auth-req", "auth-ack", "update", "mfstart", "module", "publishshard"}

// Sizes of the wire structures, as a C compiler lays out Redis 7.0's
// cluster.h: clusterMsg without its data union (the header), one
// clusterMsgDataGossip, clusterMsgDataFail and clusterMsgDataUpdate.
const (
	nameLen    = 40 // CLUSTER_NAMELEN: a node ID, 40 hex characters
	ipLen      = 46 // NET_IP_STR_LEN
	headerLen  = 2256
	gossipLen  = 104
	failLen    = nameLen
	updateLen  = 8 + nameLen + Slots/8
	extHdrLen  = 8 // clusterMsgPingExt: length, type, padding
	maxMsgLen  = 1 << 20
	protoVer   = 1
	extHostKey = 0 // CLUSTERMSG_EXT_TYPE_HOSTNAME
)

// Offsets of the header's fields.
const (
	offTotlen       = 4
	offVer          = 8
	offPort         = 10
	offType         = 12
	offCount        = 14
	offCurrentEpoch = 16
	offConfigEpoch  = 24
	offOffset       = 32
	offSender       = 40
	offSlots        = offSender + nameLen
	offSlaveOf      = offSlots + Slots/8
	offMyIP         = offSlaveOf + nameLen
	offExtensions   = offMyIP + ipLen
	offPPort        = offExtensions + 2 + 30
	offCPort        = offPPort + 2
	offFlags        = offCPort + 2
	offState        = offFlags + 2
	offMFlags       = offState + 1
)

// Flags of a message's mflags[0] (CLUSTERMSG_FLAG0_*): PAUSED, a
// primary in a manual failover that holds its writes (its offset is the
// one its replica must reach); FORCEACK, a FAILOVER_AUTH_REQUEST of a
// manual failover, to be granted though the primary is up; EXT_DATA, a
// PING, PONG or MEET carries extensions.
const (
	mflag0Paused   = 1 << 0
	mflag0ForceAck = 1 << 1
	mflag0ExtData  = 1 << 2
)

// Node flags as the bus carries them (CLUSTER_NODE_*).
const (
	flagMaster     = 1
	flagSlave      = 2
	flagPFail      = 4
	flagFail       = 8
	flagMyself     = 16
	flagHandshake  = 32
	flagNoAddr     = 64
	flagMeet       = 128
	flagMigrateTo  = 256
	flagNoFailover = 512
)

// header is a message's fixed part, decoded.
type header struct {
	typ          uint16
	count        uint16
	port         uint16
	currentEpoch uint64
	configEpoch  uint64
	offset       uint64
	sender       string
	slots        [Slots / 8]byte
	slaveOf      string // "" for a primary
	myIP         string // "" unless announced
	extensions   uint16
	pport, cport uint16
	flags        uint16
	state        byte
	mflags       [3]byte
}

// gossip is one clusterMsgDataGossip entry: what the sender knows of a
// third node.
type gossip struct {
	name         string
	pingSent     uint32 // seconds
	pongReceived uint32 // seconds
	ip           string
	port, cport  uint16
	flags        uint16
	pport        uint16
}

// message is one decoded bus message. gossip and hostname are set for
// PING, PONG and MEET, about for FAIL, about and slots/epoch for UPDATE.
type message struct {
	header
	gossip      []gossip
	hostname    string
	hasHostname bool
	about       string
	updateEpoch uint64
	updateSlots [Slots / 8]byte
	channel     []byte // PUBLISH and PUBLISHSHARD: slices of the message
	payload     []byte
}

var (
	errBadSignature = errors.New("bad message length or signature")
	errBadVersion   = errors.New("unsupported protocol version")
)

// frameLen checks the first 8 bytes of a message (the signature and the
// total length) as Redis's read handler does, and returns the length of
// the whole message; 0 when fewer than 8 bytes are there.
func frameLen(b []byte) (int, error) {
	if len(b) < 8 {
		return 0, nil
	}
	if string(b[:4]) != "RCmb" {
		return 0, errBadSignature
	}
	n := binary.BigEndian.Uint32(b[offTotlen:])
	if n < headerLen || n > maxMsgLen {
		return 0, fmt.Errorf("%w: totlen %d not between %d and %d", errBadSignature, n, headerLen, maxMsgLen)
	}
	return int(n), nil
}

// cstr returns the NUL-terminated string at the start of b.
func cstr(b []byte) string {
	if i := bytes.IndexByte(b, 0); i >= 0 {
		b = b[:i]
	}
	return string(b)
}

// decode parses one whole message (frameLen bytes), checking its length
// against its type and content as Redis's clusterProcessPacket does.
func decode(b []byte) (*message, error) {
	be := binary.BigEndian
	if be.Uint16(b[offVer:]) != protoVer {
		return nil, errBadVersion
	}
	m := &message{}
	h := &m.header
	h.typ = be.Uint16(b[offType:])
	h.count = be.Uint16(b[offCount:])
	h.port = be.Uint16(b[offPort:])
	h.currentEpoch = be.Uint64(b[offCurrentEpoch:])
	h.configEpoch = be.Uint64(b[offConfigEpoch:])
	h.offset = be.Uint64(b[offOffset:])
	h.sender = string(b[offSender : offSender+nameLen])
	copy(h.slots[:], b[offSlots:])
	if b[offSlaveOf] != 0 {
		h.slaveOf = string(b[offSlaveOf : offSlaveOf+nameLen])
	}
	h.myIP = cstr(b[offMyIP : offMyIP+ipLen])
	h.extensions = be.Uint16(b[offExtensions:])
	h.pport = be.Uint16(b[offPPort:])
	h.cport = be.Uint16(b[offCPort:])
	h.flags = be.Uint16(b[offFlags:])
	h.state = b[offState]
	copy(h.mflags[:], b[offMFlags:offMFlags+3])
	body := b[headerLen:]
	switch h.typ {
	case msgPing, msgPong, msgMeet:
		return m, m.decodePing(body)
	case msgFail:
		if len(body) != failLen {
			return nil, fmt.Errorf("FAIL message of %d bytes, want %d", len(b), headerLen+failLen)
		}
		m.about = string(body[:nameLen])
	case msgPublish, msgPublishShard:
		if len(body) < 8 {
			return nil, fmt.Errorf("%s message of %d bytes, shorter than its lengths", msgTypeNames[h.typ], len(b))
		}
		clen, mlen := uint64(be.Uint32(body)), uint64(be.Uint32(body[4:]))
		if uint64(len(body)) != 8+clen+mlen {
			return nil, fmt.Errorf("%s message of %d bytes, want %d for a channel of %d and a message of %d", msgTypeNames[h.typ], len(b), uint64(headerLen)+8+clen+mlen, clen, mlen)
		}
		m.channel, m.payload = body[8:8+clen], body[8+clen:]
	case msgFailoverAuthRequest, msgFailoverAuthAck, msgMFStart:
		if len(body) != 0 {
			return nil, fmt.Errorf("%s message of %d bytes, want %d", msgTypeNames[h.typ], len(b), headerLen)
		}
	case msgUpdate:
		if len(body) != updateLen {
			return nil, fmt.Errorf("UPDATE message of %d bytes, want %d", len(b), headerLen+updateLen)
		}
		m.updateEpoch = be.Uint64(body)
		m.about = string(body[8 : 8+nameLen])
		copy(m.updateSlots[:], body[8+nameLen:])
	}
	return m, nil
}

func (m *message) decodePing(body []byte) error {
	be := binary.BigEndian
	n := int(m.count) * gossipLen
	if n > len(body) {
		return fmt.Errorf("%s message of %d bytes cannot hold %d gossip entries", msgTypeNames[m.typ], headerLen+len(body), m.count)
	}
	m.gossip = make([]gossip, m.count)
	for i := range m.gossip {
		g := body[i*gossipLen:]
		m.gossip[i] = gossip{
			name:         string(g[:nameLen]),
			pingSent:     be.Uint32(g[40:]),
			pongReceived: be.Uint32(g[44:]),
			ip:           cstr(g[48 : 48+ipLen]),
			port:         be.Uint16(g[94:]),
			cport:        be.Uint16(g[96:]),
			flags:        be.Uint16(g[98:]),
			pport:        be.Uint16(g[100:]),
		}
	}
	rest := body[n:]
	if m.mflags[0]&mflag0ExtData != 0 {
		for range m.extensions {
			if len(rest) < extHdrLen {
				return fmt.Errorf("%s message: extension past the end", msgTypeNames[m.typ])
			}
			l := int(be.Uint32(rest))
			if l%8 != 0 || l < extHdrLen || l > len(rest) {
				return fmt.Errorf("%s message: extension of length %d (padded to 8, at most the %d bytes left)", msgTypeNames[m.typ], l, len(rest))
			}
			if be.Uint16(rest[4:]) == extHostKey {
				m.hostname, m.hasHostname = cstr(rest[extHdrLen:l]), true
			}
			rest = rest[l:]
		}
	}
	if len(rest) != 0 {
		return fmt.Errorf("%s message of %d bytes, %d more than its gossip and extensions", msgTypeNames[m.typ], headerLen+len(body), len(rest))
	}
	return nil
}

// appendHeader appends a header of type typ with h's fields; the caller
// sets totlen (putTotlen) once the body is appended.
func appendHeader(dst []byte, h *header) []byte {
	start := len(dst)
	dst = append(dst, make([]byte, headerLen)...)
	b := dst[start:]
	be := binary.BigEndian
	copy(b, "RCmb")
	be.PutUint16(b[offVer:], protoVer)
	be.PutUint16(b[offPort:], h.port)
	be.PutUint16(b[offType:], h.typ)
	be.PutUint16(b[offCount:], h.count)
	be.PutUint64(b[offCurrentEpoch:], h.currentEpoch)
	be.PutUint64(b[offConfigEpoch:], h.configEpoch)
	be.PutUint64(b[offOffset:], h.offset)
	copy(b[offSender:offSender+nameLen], h.sender)
	copy(b[offSlots:], h.slots[:])
	copy(b[offSlaveOf:offSlaveOf+nameLen], h.slaveOf)
	copy(b[offMyIP:offMyIP+ipLen-1], h.myIP)
	be.PutUint16(b[offExtensions:], h.extensions)
	be.PutUint16(b[offPPort:], h.pport)
	be.PutUint16(b[offCPort:], h.cport)
	be.PutUint16(b[offFlags:], h.flags)
	b[offState] = h.state
	copy(b[offMFlags:], h.mflags[:])
	return dst
}

// appendGossip appends one gossip entry.
func appendGossip(dst []byte, g *gossip) []byte {
	var e [gossipLen]byte
	be := binary.BigEndian
	copy(e[:nameLen], g.name)
	be.PutUint32(e[40:], g.pingSent)
	be.PutUint32(e[44:], g.pongReceived)
	copy(e[48:48+ipLen-1], g.ip)
	be.PutUint16(e[94:], g.port)
	be.PutUint16(e[96:], g.cport)
	be.PutUint16(e[98:], g.flags)
	be.PutUint16(e[100:], g.pport)
	return append(dst, e[:]...)
}

// appendHostnameExt appends the hostname extension, NUL-terminated and
// padded to 8 bytes as Redis writes it.
func appendHostnameExt(dst []byte, hostname string) []byte {
	padded := (len(hostname) + 1 + 7) / 8 * 8
	var h [extHdrLen]byte
	binary.BigEndian.PutUint32(h[:], uint32(extHdrLen+padded))
	binary.BigEndian.PutUint16(h[4:], extHostKey)
	dst = append(dst, h[:]...)
	dst = append(dst, hostname...)
	return append(dst, make([]byte, padded-len(hostname))...)
}

// putTotlen writes the length of the message that starts at start and
// ends at the end of b.
func putTotlen(b []byte, start int) {
	binary.BigEndian.PutUint32(b[start+offTotlen:], uint32(len(b)-start))
}
