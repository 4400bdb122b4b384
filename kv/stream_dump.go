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

// streamGroupsValue describes s's consumer groups (none yet).
func streamGroupsValue(*store.Stream) []rdb.StreamGroup { return nil }

// loadStreamGroups adds v's consumer groups to s.
func loadStreamGroups(_ *store.Stream, v *rdb.Stream) error {
	if len(v.Groups) > 0 {
		return errors.New("stream consumer groups are not loaded yet")
	}
	return nil
}
