package store

import (
	"bytes"
	"fmt"
	"math/rand"
	"slices"
	"testing"
)

// checkGroups fails unless s's group bookkeeping is consistent: the
// running size equals a recount, each PEL is sorted without duplicates and
// names live consumers, and each consumer's pending count is what the PEL
// says.
func checkGroups(t *testing.T, s *Stream, step int) {
	t.Helper()
	if got, want := s.groupBytes, s.groupsSize(); got != want {
		t.Fatalf("step %d: groupBytes %d, recount %d", step, got, want)
	}
	if !slices.IsSortedFunc(s.groups, func(a, b *StreamGroup) int { return bytes.Compare(a.name, b.name) }) {
		t.Fatalf("step %d: groups out of order", step)
	}
	for _, g := range s.groups {
		counts := make([]int64, len(g.consumers))
		for i, p := range g.pel {
			if i > 0 && !g.pel[i-1].ID.Less(p.ID) {
				t.Fatalf("step %d: group %s: PEL out of order at %d", step, g.name, i)
			}
			if p.Consumer < 0 || int(p.Consumer) >= len(g.consumers) {
				t.Fatalf("step %d: group %s: pending %v names consumer %d of %d", step, g.name, p.ID, p.Consumer, len(g.consumers))
			}
			counts[p.Consumer]++
		}
		for i, c := range g.consumers {
			if c.pending != counts[i] {
				t.Fatalf("step %d: group %s: consumer %s counts %d pending, the PEL %d", step, g.name, g.ConsumerName(int32(i)), c.pending, counts[i])
			}
		}
	}
}

// TestStreamGroupsBookkeeping runs random group operations (create,
// destroy, consumers created and deleted, deliveries, claims, acks,
// forced entries) and checks after each that the size the stream reports
// is a recount's and the PEL and consumers agree; a clone agrees too.
func TestStreamGroupsBookkeeping(t *testing.T) {
	rng := rand.New(rand.NewSource(26))
	s := NewStream()
	for i := 1; i <= 200; i++ {
		s.Add(StreamID{Ms: uint64(i)}, [][]byte{[]byte("f"), []byte("v")})
	}
	names := func(prefix string, n int) [][]byte {
		var out [][]byte
		for i := 0; i < n; i++ {
			out = append(out, []byte(fmt.Sprintf("%s%d", prefix, i)))
		}
		return out
	}
	groups, consumers := names("group-", 4), names("consumer-with-a-long-name-", 6)
	for step := 0; step < 5000; step++ {
		gname := groups[rng.Intn(len(groups))]
		g := s.Group(gname)
		switch op := rng.Intn(10); {
		case g == nil || op == 0:
			if g == nil {
				s.CreateGroup(gname, StreamID{}, 0)
			} else if rng.Intn(4) == 0 {
				s.DestroyGroup(gname)
			}
		case op == 1:
			s.CreateConsumer(g, consumers[rng.Intn(len(consumers))], int64(step))
		case op == 2:
			if c := g.FindConsumer(consumers[rng.Intn(len(consumers))]); c >= 0 {
				s.DeleteConsumer(g, c)
			}
		case op <= 5:
			c, _ := s.CreateConsumer(g, consumers[rng.Intn(len(consumers))], int64(step))
			s.Deliver(g, c, StreamID{Ms: uint64(rng.Intn(220))}, int64(step))
		case op == 6:
			if i, ok := g.FindPending(StreamID{Ms: uint64(rng.Intn(220))}); ok {
				s.RemovePending(g, i)
			}
		case op == 7:
			c, _ := s.CreateConsumer(g, consumers[rng.Intn(len(consumers))], int64(step))
			id := StreamID{Ms: uint64(rng.Intn(220))}
			i, ok := g.FindPending(id)
			if !ok {
				s.AddPending(g, i, id, int64(step))
			}
			g.Claim(i, c)
		default:
			if len(g.pel) > 0 {
				c, _ := s.CreateConsumer(g, consumers[rng.Intn(len(consumers))], int64(step))
				g.Claim(rng.Intn(len(g.pel)), c)
			}
		}
		checkGroups(t, s, step)
		if s.Size() != s.size+s.groupsSize() {
			t.Fatalf("step %d: Size %d, recount %d", step, s.Size(), s.size+s.groupsSize())
		}
	}
	c := s.Clone().(*Stream)
	checkGroups(t, c, -1)
	if c.Size() != c.size+c.groupsSize() {
		t.Fatalf("clone: Size %d, recount %d", c.Size(), c.size+c.groupsSize())
	}
}

// TestLoadGroupRefusesInconsistentPELs: duplicates, a consumer's pending
// ID missing from the group's PEL, an entry owned twice or by nobody are
// refused, and a refused group leaves no trace.
func TestLoadGroupRefusesInconsistentPELs(t *testing.T) {
	id := func(ms uint64) StreamID { return StreamID{Ms: ms} }
	pel := []PendingEntry{{ID: id(1)}, {ID: id(2)}}
	cases := map[string]struct {
		pel       []PendingEntry
		consumers []StreamConsumerData
	}{
		"duplicate pending":  {append(slices.Clone(pel), PendingEntry{ID: id(1)}), []StreamConsumerData{{Name: []byte("c"), PEL: []StreamID{id(1), id(2)}}}},
		"missing from PEL":   {pel, []StreamConsumerData{{Name: []byte("c"), PEL: []StreamID{id(1), id(2), id(3)}}}},
		"owned twice":        {pel, []StreamConsumerData{{Name: []byte("c"), PEL: []StreamID{id(1), id(2)}}, {Name: []byte("d"), PEL: []StreamID{id(2)}}}},
		"owned by nobody":    {pel, []StreamConsumerData{{Name: []byte("c"), PEL: []StreamID{id(1)}}}},
		"duplicate consumer": {pel, []StreamConsumerData{{Name: []byte("c"), PEL: []StreamID{id(1)}}, {Name: []byte("c"), PEL: []StreamID{id(2)}}}},
	}
	for name, tc := range cases {
		s := NewStream()
		before := s.Size()
		if err := s.LoadGroup([]byte("g"), StreamID{}, 0, tc.pel, tc.consumers); err == nil {
			t.Errorf("%s: loaded", name)
		}
		if s.Group([]byte("g")) != nil || s.Size() != before {
			t.Errorf("%s: the refused group stayed (size %d, was %d)", name, s.Size(), before)
		}
	}
	s := NewStream()
	if err := s.LoadGroup([]byte("g"), StreamID{}, 0, pel, []StreamConsumerData{{Name: []byte("c"), PEL: []StreamID{id(2), id(1)}}}); err != nil {
		t.Fatalf("a consistent group: %v", err)
	}
	checkGroups(t, s, 0)
}
