package store

import (
	"fmt"
	"math/rand"
	"testing"
)

// streamModel is a plain slice of live entries, the model the stream's
// nodes are checked against.
type streamModel struct {
	ids []StreamID
	fv  map[StreamID]string
}

func (m *streamModel) rangeOf(start, end StreamID) []string {
	var out []string
	for _, id := range m.ids {
		if !id.Less(start) && !end.Less(id) {
			out = append(out, id.String()+" "+m.fv[id])
		}
	}
	return out
}

func streamRange(s *Stream, start, end StreamID, rev bool) []string {
	var out []string
	s.Range(start, end, rev, func(id StreamID, fv [][]byte) bool {
		out = append(out, id.String()+" "+fmt.Sprint(len(fv))+string(fv[0])+string(fv[1]))
		return true
	})
	return out
}

// TestStreamAgainstModel adds, deletes and trims exactly at random and
// compares ranges both ways with the model; the nodes, reloaded through
// LoadStream, read the same.
func TestStreamAgainstModel(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	s := NewStream()
	m := &streamModel{fv: map[StreamID]string{}}
	next := StreamID{Ms: 1}
	for i := 0; i < 20000; i++ {
		switch op := rng.Intn(10); {
		case op < 6:
			next.Seq += uint64(rng.Intn(3))
			if rng.Intn(4) == 0 {
				next = StreamID{Ms: next.Ms + 1 + uint64(rng.Intn(1000)), Seq: 0}
			}
			field := []string{"f", "g", "123"}[rng.Intn(3)]
			val := fmt.Sprint(rng.Intn(1 << 20))
			s.Add(next, [][]byte{[]byte(field), []byte(val)})
			m.ids = append(m.ids, next)
			m.fv[next] = "2" + field + val
			next.Seq++
		case op < 8 && len(m.ids) > 0:
			j := rng.Intn(len(m.ids))
			id := m.ids[j]
			if n := s.Delete([]StreamID{id, {Ms: id.Ms, Seq: id.Seq + 1000000}}); n != 1 {
				t.Fatalf("op %d: delete %v: %d (has %v)", i, id, n, s.Has(id))
			}
			m.ids = append(m.ids[:j], m.ids[j+1:]...)
		case op == 8 && len(m.ids) > 0:
			keep := uint64(rng.Intn(len(m.ids) + 1))
			if got := s.Trim(Trim{MaxLen: keep}); got != int64(uint64(len(m.ids))-keep) {
				t.Fatalf("trim to %d removed %d of %d", keep, got, len(m.ids))
			}
			m.ids = m.ids[uint64(len(m.ids))-keep:]
		default:
			if len(m.ids) == 0 {
				continue
			}
			a, b := m.ids[rng.Intn(len(m.ids))], m.ids[rng.Intn(len(m.ids))]
			want := m.rangeOf(a, b)
			if got := streamRange(s, a, b, false); fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("range %v %v:\n%v\nwant %v", a, b, got, want)
			}
			rev := streamRange(s, a, b, true)
			for x, y := 0, len(rev)-1; x < y; x, y = x+1, y-1 {
				rev[x], rev[y] = rev[y], rev[x]
			}
			if fmt.Sprint(rev) != fmt.Sprint(want) {
				t.Fatalf("reverse range %v %v differs", a, b)
			}
		}
		if s.Entries() != uint64(len(m.ids)) {
			t.Fatalf("op %d: %d entries, model %d", i, s.Entries(), len(m.ids))
		}
		if len(m.ids) > 0 && s.FirstID() != m.ids[0] {
			t.Fatalf("op %d: first %v, model %v", i, s.FirstID(), m.ids[0])
		}
	}
	for j := 0; j < 1000; j++ {
		next.Seq++
		s.Add(next, [][]byte{[]byte("f"), []byte("v")})
		m.ids = append(m.ids, next)
		m.fv[next] = "2fv"
	}
	var nodes []StreamNodeData
	s.Nodes(func(master StreamID, lp []byte) { nodes = append(nodes, StreamNodeData{master, lp}) })
	if len(nodes) < 10 {
		t.Fatalf("only %d nodes", len(nodes))
	}
	l, err := LoadStream(nodes, s.Meta())
	if err != nil {
		t.Fatal(err)
	}
	all := StreamID{}
	if fmt.Sprint(streamRange(l, all, MaxStreamID, false)) != fmt.Sprint(m.rangeOf(all, MaxStreamID)) {
		t.Fatal("loaded stream reads differently")
	}
}

// TestLoadStreamRefusesCorruptNodes flips, truncates and extends bytes of
// valid nodes: LoadStream refuses what is not a well-formed stream, and
// whatever it accepts can be read, trimmed and deleted from without a
// panic.
func TestLoadStreamRefusesCorruptNodes(t *testing.T) {
	s := NewStream()
	for i := 1; i <= 30; i++ {
		fields := [][]byte{[]byte("f"), []byte(fmt.Sprint(i)), []byte("g"), []byte("text")}
		if i%7 == 0 {
			fields = fields[:2]
		}
		s.Add(StreamID{Ms: uint64(i), Seq: 1}, fields)
	}
	s.Delete([]StreamID{{Ms: 3, Seq: 1}})
	var lp []byte
	var master StreamID
	s.Nodes(func(m StreamID, b []byte) { master, lp = m, append([]byte(nil), b...) })
	meta := s.Meta()
	try := func(b []byte, m StreamMeta) {
		l, err := LoadStream([]StreamNodeData{{master, b}}, m)
		if err != nil {
			return
		}
		streamRange(l, StreamID{}, MaxStreamID, true)
		l.Delete([]StreamID{{Ms: 5, Seq: 1}})
		l.Trim(Trim{ByID: true, MinID: StreamID{Ms: 20}})
		l.Add(MaxStreamID, [][]byte{[]byte("a"), []byte("b")})
	}
	accepted := 0
	for i := range lp {
		for _, x := range []byte{0x01, 0x80, 0xFF, 0x40} {
			b := append([]byte(nil), lp...)
			b[i] ^= x
			if _, err := LoadStream([]StreamNodeData{{master, b}}, meta); err == nil {
				accepted++
			}
			try(b, meta)
		}
		try(lp[:i], meta)
	}
	try(lp, StreamMeta{Length: meta.Length + 1, LastID: meta.LastID})
	if _, err := LoadStream([]StreamNodeData{{master, lp}}, StreamMeta{Length: meta.Length, LastID: StreamID{Ms: 1}}); err == nil {
		t.Error("a last ID before the last entry was accepted")
	}
	if accepted == 0 || accepted == 4*len(lp) {
		t.Errorf("%d of %d corruptions accepted: the flips should hit both data and structure", accepted, 4*len(lp))
	}
}
