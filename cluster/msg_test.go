package cluster

import (
	"bytes"
	"encoding/binary"
	"errors"
	"strings"
	"testing"
)

func samplePing(hostname string) []byte {
	h := &header{typ: msgPing, port: 7000, pport: 0, cport: 17000, sender: strings.Repeat("a", 40),
		myIP: "10.0.0.1", flags: flagMaster, currentEpoch: 7, configEpoch: 3, offset: 99}
	h.slots[0] = 0x81
	gs := []gossip{
		{name: strings.Repeat("b", 40), pingSent: 1, pongReceived: 2, ip: "10.0.0.2", port: 7001, cport: 17001, flags: flagMaster | flagPFail},
		{name: strings.Repeat("c", 40), ip: "10.0.0.3", port: 7002, cport: 17002, flags: flagSlave},
	}
	h.count = uint16(len(gs))
	if hostname != "" {
		h.mflags[0] |= mflag0ExtData
		h.extensions = 1
	}
	b := appendHeader(nil, h)
	for i := range gs {
		b = appendGossip(b, &gs[i])
	}
	if hostname != "" {
		b = appendHostnameExt(b, hostname)
	}
	putTotlen(b, 0)
	return b
}

// TestPingRoundTrip: a PING with gossip and the hostname extension decodes
// to what was encoded, at the sizes Redis 7.0's structs have.
func TestPingRoundTrip(t *testing.T) {
	b := samplePing("node-1.example")
	if want := headerLen + 2*gossipLen + extHdrLen + 16; len(b) != want {
		t.Fatalf("message of %d bytes, want %d", len(b), want)
	}
	n, err := frameLen(b)
	if err != nil || n != len(b) {
		t.Fatalf("frameLen = %d, %v", n, err)
	}
	m, err := decode(b)
	if err != nil {
		t.Fatal(err)
	}
	if m.typ != msgPing || m.port != 7000 || m.cport != 17000 || m.myIP != "10.0.0.1" || m.currentEpoch != 7 ||
		m.configEpoch != 3 || m.offset != 99 || m.sender != strings.Repeat("a", 40) || m.slaveOf != "" ||
		!bitSet(&m.slots, 0) || !bitSet(&m.slots, 7) || bitSet(&m.slots, 1) || m.hostname != "node-1.example" {
		t.Fatalf("decoded header %+v", m.header)
	}
	if len(m.gossip) != 2 || m.gossip[0].ip != "10.0.0.2" || m.gossip[0].flags != flagMaster|flagPFail ||
		m.gossip[1].name != strings.Repeat("c", 40) || m.gossip[1].port != 7002 || m.gossip[0].pongReceived != 2 {
		t.Fatalf("decoded gossip %+v", m.gossip)
	}
}

// TestDecodeRefusesBadMessages: what Redis's clusterProcessPacket and read
// handler refuse, refused here with a reason, never a panic.
func TestDecodeRefusesBadMessages(t *testing.T) {
	good := samplePing("h")
	mutate := func(f func(b []byte) []byte) []byte { return f(bytes.Clone(good)) }
	if _, err := frameLen([]byte("GET foo\r\n")); !errors.Is(err, errBadSignature) {
		t.Errorf("garbage: %v", err)
	}
	short := mutate(func(b []byte) []byte { binary.BigEndian.PutUint32(b[offTotlen:], 100); return b })
	if _, err := frameLen(short); !errors.Is(err, errBadSignature) {
		t.Errorf("totlen below the header: %v", err)
	}
	huge := mutate(func(b []byte) []byte { binary.BigEndian.PutUint32(b[offTotlen:], 1<<30); return b })
	if _, err := frameLen(huge); !errors.Is(err, errBadSignature) {
		t.Errorf("totlen of 1 GB: %v", err)
	}
	for name, b := range map[string][]byte{
		"version 2":             mutate(func(b []byte) []byte { binary.BigEndian.PutUint16(b[offVer:], 2); return b }),
		"more gossip than sent": mutate(func(b []byte) []byte { binary.BigEndian.PutUint16(b[offCount:], 9); return b }),
		"trailing bytes":        mutate(func(b []byte) []byte { return append(b, 0, 0, 0, 0, 0, 0, 0, 0) }),
		"extension unpadded": mutate(func(b []byte) []byte {
			binary.BigEndian.PutUint32(b[headerLen+2*gossipLen:], 13)
			return b
		}),
		"extension past the end": mutate(func(b []byte) []byte {
			binary.BigEndian.PutUint32(b[headerLen+2*gossipLen:], 64)
			return b
		}),
		"FAIL too short":   append(appendHeader(nil, &header{typ: msgFail}), 1, 2, 3),
		"UPDATE too short": append(appendHeader(nil, &header{typ: msgUpdate}), make([]byte, 10)...),
	} {
		if _, err := decode(b); err == nil {
			t.Errorf("%s: decoded without an error", name)
		}
	}
}

// FuzzDecode: any bytes decode or fail, without a panic.
func FuzzDecode(f *testing.F) {
	f.Add(samplePing(""))
	f.Add(samplePing("a-host"))
	pub := appendHeader(nil, &header{typ: msgPublish})
	pub = append(pub, 0, 0, 0, 4, 0, 0, 0, 5)
	pub = append(pub, "newshello"...)
	putTotlen(pub, 0)
	f.Add(pub)
	f.Fuzz(func(t *testing.T, b []byte) {
		n, err := frameLen(b)
		if err != nil || n == 0 || n > len(b) {
			return
		}
		_, _ = decode(b[:n])
	})
}

// TestPublishAndHeaderOnlyMessages: a PUBLISH decodes to its channel and
// message; one whose lengths do not add up to its size, and an auth
// request, ACK or MFSTART with a body, are refused as Redis refuses them.
func TestPublishAndHeaderOnlyMessages(t *testing.T) {
	publish := func(channel, msg string, extra int) []byte {
		b := appendHeader(nil, &header{typ: msgPublish, sender: strings.Repeat("a", 40)})
		var lens [8]byte
		binary.BigEndian.PutUint32(lens[:], uint32(len(channel)))
		binary.BigEndian.PutUint32(lens[4:], uint32(len(msg)))
		b = append(append(append(b, lens[:]...), channel...), msg...)
		b = append(b, make([]byte, extra)...)
		putTotlen(b, 0)
		return b
	}
	m, err := decode(publish("news", "hello", 0))
	if err != nil || string(m.channel) != "news" || string(m.payload) != "hello" {
		t.Fatalf("PUBLISH decoded to %q %q, %v", m.channel, m.payload, err)
	}
	if _, err := decode(publish("news", "hello", 3)); err == nil {
		t.Error("a PUBLISH longer than its lengths was accepted")
	}
	b := publish("news", "hello", 0)
	binary.BigEndian.PutUint32(b[headerLen:], 1<<31)
	if _, err := decode(b); err == nil {
		t.Error("a PUBLISH claiming a 2 GB channel was accepted")
	}
	for _, typ := range []uint16{msgFailoverAuthRequest, msgFailoverAuthAck, msgMFStart} {
		b := appendHeader(nil, &header{typ: typ})
		putTotlen(b, 0)
		if _, err := decode(b); err != nil {
			t.Errorf("%s: %v", msgTypeNames[typ], err)
		}
		b = append(b, 0)
		putTotlen(b, 0)
		if _, err := decode(b); err == nil {
			t.Errorf("%s with a body was accepted", msgTypeNames[typ])
		}
	}
}
