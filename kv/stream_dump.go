package kv

import (
	"errors"

	"github.com/shoalkv/shoal/rdb"
	"github.com/shoalkv/shoal/store"
)

// Streams to and from rdb.Stream, for DUMP, RESTORE, SAVE and full syncs:
// the nodes pass as Redis's listpacks.

func toRDBID(id store.StreamID) rdb.StreamID { return rdb.StreamID{Ms: id.Ms, Seq: id.Seq} }
func fromRDBID(id rdb.StreamID) store.StreamID {
	return store.StreamID{Ms: id.Ms, Seq: id.Seq}
}

// streamValueOf describes s; its listpacks are s's memory (use them under
// the key's lock).
func streamValueOf(s *store.Stream) *rdb.Stream {
	m := s.Meta()
	v := &rdb.Stream{Length: m.Length, LastID: toRDBID(m.LastID), FirstID: toRDBID(m.FirstID),
		MaxDeletedID: toRDBID(m.MaxDeletedID), EntriesAdded: m.EntriesAdded}
	s.Nodes(func(master store.StreamID, lp []byte) {
		v.Nodes = append(v.Nodes, rdb.StreamNode{Master: toRDBID(master), LP: lp})
	})
	v.Groups = streamGroupsValue(s)
	return v
}

// streamOf builds a stream from v, checking it whole.
func streamOf(v *rdb.Stream) (*store.Stream, error) {
	if v == nil {
		return nil, errors.New("stream without data")
	}
	nodes := make([]store.StreamNodeData, len(v.Nodes))
	for i, nd := range v.Nodes {
		nodes[i] = store.StreamNodeData{Master: fromRDBID(nd.Master), LP: nd.LP}
	}
	s, err := store.LoadStream(nodes, store.StreamMeta{Length: v.Length, LastID: fromRDBID(v.LastID),
		FirstID: fromRDBID(v.FirstID), MaxDeletedID: fromRDBID(v.MaxDeletedID), EntriesAdded: v.EntriesAdded, V1: v.V1})
	if err != nil {
		return nil, err
	}
	if err := loadStreamGroups(s, v); err != nil {
		return nil, err
	}
	return s, nil
}

// streamGroupsValue describes s's consumer groups, in Redis's order (by
// name; each consumer's pending IDs ascending). The names are s's memory.
func streamGroupsValue(s *store.Stream) []rdb.StreamGroup {
	var gs []rdb.StreamGroup
	for _, g := range s.Groups() {
		pel := g.Pending()
		v := rdb.StreamGroup{Name: g.Name(), LastID: toRDBID(g.LastID), EntriesRead: g.EntriesRead,
			PEL: make([]rdb.StreamPending, len(pel))}
		for i, p := range pel {
			v.PEL[i] = rdb.StreamPending{ID: toRDBID(p.ID), DeliveryTime: p.DeliveryTime, DeliveryCount: p.DeliveryCount}
		}
		for _, c := range g.Consumers() {
			rc := rdb.StreamConsumer{Name: c.Name, SeenTime: c.SeenTime, PEL: make([]rdb.StreamID, 0, c.Pending)}
			for _, p := range pel {
				if p.Consumer == int32(c.Index) {
					rc.PEL = append(rc.PEL, toRDBID(p.ID))
				}
			}
			v.Consumers = append(v.Consumers, rc)
		}
		gs = append(gs, v)
	}
	return gs
}

// loadStreamGroups adds v's consumer groups to s; a STREAM_LISTPACKS value
// (Redis 5 and 6) has no entries-read: each group's is estimated from its
// last ID, as Redis's loader does.
func loadStreamGroups(s *store.Stream, v *rdb.Stream) error {
	for _, g := range v.Groups {
		pel := make([]store.PendingEntry, len(g.PEL))
		for i, p := range g.PEL {
			pel[i] = store.PendingEntry{ID: fromRDBID(p.ID), DeliveryTime: p.DeliveryTime, DeliveryCount: p.DeliveryCount}
		}
		cs := make([]store.StreamConsumerData, len(g.Consumers))
		for i, c := range g.Consumers {
			cs[i] = store.StreamConsumerData{Name: c.Name, SeenTime: c.SeenTime, PEL: make([]store.StreamID, len(c.PEL))}
			for j, id := range c.PEL {
				cs[i].PEL[j] = fromRDBID(id)
			}
		}
		entriesRead := g.EntriesRead
		if v.V1 {
			entriesRead = s.EstimateDistance(fromRDBID(g.LastID))
		}
		if err := s.LoadGroup(g.Name, fromRDBID(g.LastID), entriesRead, pel, cs); err != nil {
			return err
		}
	}
	return nil
}
