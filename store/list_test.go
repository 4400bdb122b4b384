package store

import (
	"bytes"
	"fmt"
	"math/rand"
	"testing"
)

// checkList verifies l against the model: elements in order (forward and
// backward), counts, no empty nodes, and the running size against a recount.
func checkList(t *testing.T, l *List, model [][]byte, step int, op string) {
	t.Helper()
	if l.Len() != len(model) {
		t.Fatalf("step %d (%s): Len %d, model %d", step, op, l.Len(), len(model))
	}
	size := listHeader + int64(cap(l.nodes))*listNodeSize
	n := 0
	for k, nd := range l.nodes {
		if nd.count <= 0 {
			t.Fatalf("step %d (%s): node %d has count %d", step, op, k, nd.count)
		}
		n += int(nd.count)
		size += int64(cap(nd.buf))
	}
	if n != l.n {
		t.Fatalf("step %d (%s): node counts sum to %d, n is %d", step, op, n, l.n)
	}
	if size != l.Size() {
		t.Fatalf("step %d (%s): Size %d, recount %d", step, op, l.Size(), size)
	}
	i := 0
	l.Range(0, l.Len()-1, func(v []byte) bool {
		if !bytes.Equal(v, model[i]) {
			t.Fatalf("step %d (%s): element %d is %q, model %q", step, op, i, v, model[i])
		}
		i++
		return true
	})
	if i != len(model) {
		t.Fatalf("step %d (%s): Range visited %d of %d", step, op, i, len(model))
	}
	if len(model) > 0 {
		want := len(model) - 1
		l.RangeBack(len(model)-1, func(j int, v []byte) bool {
			if j != want || !bytes.Equal(v, model[j]) {
				t.Fatalf("step %d (%s): RangeBack at %d (want %d) got %q", step, op, j, want, v)
			}
			want--
			return true
		})
		if want != -1 {
			t.Fatalf("step %d (%s): RangeBack stopped at %d", step, op, want)
		}
	}
}

func randomElement(r *rand.Rand) []byte {
	var n int
	switch x := r.Intn(100); {
	case x < 70:
		n = r.Intn(12)
	case x < 95:
		n = r.Intn(300)
	case x < 99:
		n = 1000 + r.Intn(4000)
	default:
		nodeBytes, _ := listNodeLimits()
		n = nodeBytes + r.Intn(3000) // a node of its own
	}
	b := make([]byte, n)
	for i := range b {
		b[i] = byte('a' + r.Intn(3)) // few letters: Remove finds matches
	}
	if n < 3 && r.Intn(2) == 0 {
		b = []byte{"xyz"[r.Intn(3)]}
	}
	return b
}

// TestListModel runs random operations on a List and on a Go slice of
// elements and compares them after every step.
func TestListModel(t *testing.T) {
	for seed := int64(1); seed <= 6; seed++ {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			r := rand.New(rand.NewSource(seed))
			l := NewList()
			var model [][]byte
			steps := 6000
			if testing.Short() {
				steps = 1500
			}
			for step := 0; step < steps; step++ {
				var op string
				// Grow more often than shrink until the list is a few nodes long.
				grow := len(model) < 3000 && r.Intn(3) > 0
				switch x := r.Intn(10); {
				case grow && x < 5 || x == 0:
					v := randomElement(r)
					if r.Intn(2) == 0 {
						op = "pushfront"
						l.PushFront(v)
						model = append([][]byte{v}, model...)
					} else {
						op = "pushback"
						l.PushBack(v)
						model = append(model, v)
					}
				case x == 1 && len(model) > 0:
					if r.Intn(2) == 0 {
						op = "popfront"
						got := l.PopFront(nil)
						if !bytes.Equal(got, model[0]) {
							t.Fatalf("step %d: PopFront %q, model %q", step, got, model[0])
						}
						model = model[1:]
					} else {
						op = "popback"
						got := l.PopBack(nil)
						if !bytes.Equal(got, model[len(model)-1]) {
							t.Fatalf("step %d: PopBack %q, model %q", step, got, model[len(model)-1])
						}
						model = model[:len(model)-1]
					}
				case x == 2:
					op = "insert"
					i := r.Intn(len(model) + 1)
					v := randomElement(r)
					l.Insert(i, v)
					model = append(model[:i], append([][]byte{v}, model[i:]...)...)
				case x == 3 && len(model) > 0:
					op = "set"
					i := r.Intn(len(model))
					v := randomElement(r)
					l.Set(i, v)
					model[i] = v
				case x == 4 && len(model) > 0:
					op = "delete"
					i := r.Intn(len(model))
					n := r.Intn(len(model)-i+1) / (1 + r.Intn(20))
					l.Delete(i, n)
					model = append(model[:i], model[i+n:]...)
				case x == 5 && len(model) > 0:
					op = "remove"
					v := model[r.Intn(len(model))]
					v = append([]byte(nil), v...)
					limit := r.Intn(4)
					fromTail := r.Intn(2) == 0
					got := l.Remove(v, limit, fromTail)
					want := 0
					var kept [][]byte
					if fromTail {
						for i := len(model) - 1; i >= 0; i-- {
							if bytes.Equal(model[i], v) && (limit == 0 || want < limit) {
								want++
								continue
							}
							kept = append([][]byte{model[i]}, kept...)
						}
					} else {
						for _, e := range model {
							if bytes.Equal(e, v) && (limit == 0 || want < limit) {
								want++
								continue
							}
							kept = append(kept, e)
						}
					}
					if got != want {
						t.Fatalf("step %d: Remove(%q, %d, %v) = %d, model %d", step, v, limit, fromTail, got, want)
					}
					model = kept
				case x == 6 && len(model) > 0:
					op = "index"
					i := r.Intn(len(model))
					if got := l.Index(i); !bytes.Equal(got, model[i]) {
						t.Fatalf("step %d: Index(%d) = %q, model %q", step, i, got, model[i])
					}
				case x == 7 && r.Intn(20) == 0:
					op = "clone"
					c := l.Clone().(*List)
					checkList(t, c, model, step, op)
					l.PushBack([]byte("after-clone")) // the clone must not see it
					checkList(t, c, model, step, op)
					model = append(model, []byte("after-clone"))
				default:
					continue
				}
				if step%7 == 0 || len(model) < 50 {
					checkList(t, l, model, step, op)
				}
			}
			checkList(t, l, model, steps, "end")
		})
	}
}

// TestListLongIndexSkipsNodes: a lookup in a long list touches one node's
// elements, not the whole list's.
func TestListLongIndexSkipsNodes(t *testing.T) {
	l := NewList()
	for i := 0; i < 200000; i++ {
		l.PushBack([]byte(fmt.Sprint(i)))
	}
	if len(l.nodes) < 50 {
		t.Fatalf("only %d nodes for 200000 elements", len(l.nodes))
	}
	for _, i := range []int{0, 1, 99999, 100000, 150001, 199999} {
		if got := string(l.Index(i)); got != fmt.Sprint(i) {
			t.Fatalf("Index(%d) = %q", i, got)
		}
	}
	l.Set(123456, []byte("x"))
	if got := string(l.Index(123456)); got != "x" {
		t.Fatalf("after Set: %q", got)
	}
	for l.Len() > 0 {
		l.PopFront(nil)
	}
	if l.Size() != listHeader || len(l.nodes) != 0 {
		t.Fatalf("emptied list: size %d, %d nodes", l.Size(), len(l.nodes))
	}
}

func BenchmarkListPushPop(b *testing.B) {
	l := NewList()
	v := []byte("element")
	var dst []byte
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		l.PushFront(v)
		l.PushBack(v)
		if l.Len() > 10000 {
			dst = l.PopBack(dst[:0])
			dst = l.PopFront(dst[:0])
		}
	}
}
