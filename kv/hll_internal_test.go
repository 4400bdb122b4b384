package kv

import (
	"bytes"
	"math/rand/v2"
	"strconv"
	"testing"
)

// registers decodes any valid HLL into its 16384 registers.
func registers(t *testing.T, v []byte) []uint8 {
	t.Helper()
	d := v
	if v[4] == hllSparse {
		var ok bool
		if d, ok = sparseToDense(v); !ok {
			t.Fatalf("sparse value does not decode: % x", v)
		}
	}
	regs := make([]uint8, hllRegisters)
	for i := range regs {
		regs[i] = denseRegister(d[hllHeaderSize:], i)
	}
	return regs
}

// TestHLLSparseAgreesWithDense adds the same elements to a sparse and a
// dense HLL and to a plain array of registers: after every add all three
// hold the same registers and the two HLLs the same estimate, while the
// sparse one grows through the splits and merges of its opcodes and turns
// dense at hll-sparse-max-bytes.
func TestHLLSparseAgreesWithDense(t *testing.T) {
	for _, maxBytes := range []int64{3000, 300} {
		sparse := newHLL()
		dense, _ := sparseToDense(newHLL())
		var model [hllRegisters]uint8
		r := rand.New(rand.NewPCG(1, uint64(maxBytes)))
		turned := 0
		for i := range 4000 {
			ele := []byte(strconv.FormatUint(r.Uint64()%5000, 36))
			idx, count := hllPattern(ele)
			model[idx] = max(model[idx], count)
			var rs, rd int
			sparse, rs = hllAdd(sparse, ele, maxBytes)
			dense, rd = hllAdd(dense, ele, maxBytes)
			if rs != rd || rs < 0 {
				t.Fatalf("add %d: sparse says %d, dense %d", i, rs, rd)
			}
			if sparse[4] == hllSparse && int64(len(sparse)) > maxBytes {
				t.Fatalf("add %d: sparse value of %d bytes passes %d", i, len(sparse), maxBytes)
			}
			if sparse[4] == hllDense && turned == 0 {
				turned = i
			}
			if i%97 == 0 || i == 3999 {
				if !bytes.Equal(registers(t, sparse), model[:]) || !bytes.Equal(registers(t, dense), model[:]) {
					t.Fatalf("add %d: registers differ from the model", i)
				}
				hs, bad := hllHistogram(sparse)
				hd, _ := hllHistogram(dense)
				if bad || hllEstimate(&hs) != hllEstimate(&hd) {
					t.Fatalf("add %d: estimates %d and %d (invalid %v)", i, hllEstimate(&hs), hllEstimate(&hd), bad)
				}
			}
		}
		if turned == 0 {
			t.Fatalf("hll-sparse-max-bytes %d: the sparse value never turned dense", maxBytes)
		}
	}
}

// TestHLLRegisterPast32 sets a register above what a sparse VAL holds:
// the value turns dense with that register and keeps the others.
func TestHLLRegisterPast32(t *testing.T) {
	v := newHLL()
	v, _ = sparseSet(v, 5, 3, 3000)
	v, r := sparseSet(v, 9000, 40, 3000)
	if r != 1 || v[4] != hllDense || len(v) != hllDenseSize {
		t.Fatalf("after a register of 40: r=%d encoding %d, %d bytes", r, v[4], len(v))
	}
	regs := registers(t, v)
	if regs[5] != 3 || regs[9000] != 40 || regs[9001] != 0 {
		t.Fatalf("registers 5, 9000, 9001 = %d %d %d", regs[5], regs[9000], regs[9001])
	}
	if string(v[:4]) != "HYLL" || v[15]&0x80 == 0 {
		t.Fatalf("header after promotion: % x", v[:16])
	}
}

// TestHLLSelfTest runs PFSELFTEST's checks with a hundred thousand adds
// (the command's ten million take seconds, longer under -race).
func TestHLLSelfTest(t *testing.T) {
	if msg := hllSelfTest(rand.Uint64, 3000, 100_000); msg != "" {
		t.Fatal(msg)
	}
}

// FuzzHLLValue reads arbitrary bytes as an HLL the way every command does:
// no panic, and a value any reader accepts decodes the same in all of them.
func FuzzHLLValue(f *testing.F) {
	f.Add(newHLL(), []byte("a"))
	f.Add([]byte("HYLL\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x80\x7f"), []byte("b"))
	f.Add([]byte("HYLL\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x80\x7f\xff\x80"), []byte("c"))
	f.Add([]byte("HYLL\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x80\xff\xff\x3f\x7f\xb0"), []byte(""))
	f.Add([]byte("HYLL\x01\x00\x00\x00"), []byte("d"))
	f.Fuzz(func(t *testing.T, v, ele []byte) {
		if !isHLL(v) {
			return
		}
		v = append([]byte(nil), v...)
		histo, invalid := hllHistogram(v)
		var regs [hllRegisters]uint8
		merged := hllMergeInto(&regs, v)
		d, ok := v, true
		if v[4] == hllSparse {
			d, ok = sparseToDense(v)
			_ = decodeSparse(v)
		}
		if merged != ok {
			t.Fatalf("merge says %v, sparseToDense %v", merged, ok)
		}
		if ok && !invalid {
			dh, _ := hllHistogram(d)
			if dh != histo {
				t.Fatalf("histograms of the sparse and dense forms differ")
			}
			_ = hllEstimate(&histo)
		}
		if nv, r := hllAdd(v, ele, 3000); r >= 0 && !isHLL(nv) {
			t.Fatalf("an add left a value that is not an HLL: % x", nv)
		}
	})
}
