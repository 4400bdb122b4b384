package kv_test

import (
	"bufio"
	"fmt"
	"math/rand"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// respValue is a parsed reply: a scalar line (with its type byte), a bulk, or
// an aggregate of elements.
type respValue struct {
	kind  byte
	line  string
	elems []respValue
}

func parseRESP(rd *bufio.Reader) (respValue, error) {
	line, err := rd.ReadString('\n')
	if err != nil {
		return respValue{}, err
	}
	line = strings.TrimSuffix(line, "\r\n")
	v := respValue{kind: line[0], line: line}
	switch line[0] {
	case '$', '=':
		n, _ := strconv.Atoi(line[1:])
		if n < 0 {
			return v, nil
		}
		buf := make([]byte, n+2)
		if _, err := readFull(rd, buf); err != nil {
			return v, err
		}
		v.line = line + "|" + string(buf[:n])
	case '*', '~', '%', '>':
		n, _ := strconv.Atoi(line[1:])
		if line[0] == '%' {
			n *= 2
		}
		for i := 0; i < n; i++ {
			e, err := parseRESP(rd)
			if err != nil {
				return v, err
			}
			v.elems = append(v.elems, e)
		}
	}
	return v, nil
}

func readFull(rd *bufio.Reader, buf []byte) (int, error) {
	n := 0
	for n < len(buf) {
		m, err := rd.Read(buf[n:])
		n += m
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

// canonical renders a reply with the elements of every aggregate sorted
// (a map's field-value pairs kept together), for replies whose order is a
// hash table's.
func canonical(v respValue) string {
	if v.elems == nil {
		return v.line
	}
	var parts []string
	if v.kind == '%' {
		for i := 0; i+1 < len(v.elems); i += 2 {
			parts = append(parts, canonical(v.elems[i])+"=>"+canonical(v.elems[i+1]))
		}
	} else {
		for _, e := range v.elems {
			parts = append(parts, canonical(e))
		}
	}
	slices.Sort(parts)
	return v.line + "[" + strings.Join(parts, ",") + "]"
}

func canonicalReply(t *testing.T, raw string) string {
	v, err := parseRESP(bufio.NewReader(strings.NewReader(raw)))
	if err != nil {
		t.Fatalf("parsing %q: %v", raw, err)
	}
	return canonical(v)
}

// flatPairs canonicalizes HGETALL in RESP2 (a flat array of field, value).
func flatPairs(t *testing.T, raw string) string {
	v, err := parseRESP(bufio.NewReader(strings.NewReader(raw)))
	if err != nil {
		t.Fatal(err)
	}
	if v.kind != '*' {
		return raw
	}
	m := respValue{kind: '%', line: "%", elems: v.elems}
	return canonical(m)
}

// TestHashSetRandomOpsAgainstRedis sends the same few thousand random hash
// and set commands to redis-server and to Shoal and compares every reply:
// byte for byte, except that replies listing a hashtable-encoded
// collection (or a set computed from several) are compared as sets, as
// their order is the hash table's. Collections grow past the listpack and
// intset limits and shrink, so every command meets both encodings and the
// conversions, and OBJECT ENCODING is compared throughout.
func TestHashSetRandomOpsAgainstRedis(t *testing.T) {
	randomOpsAgainstRedis(t, 16, func(t *testing.T, proto int, ref, got *rawConn, rng *rand.Rand) {
		// h1 stays a listpack (few fields, short values), h2 gets long
		// ones, h3 only outgrows the listpack's count; s1 stays an
		// intset, s2 outgrows one, s3 gets strings.
		field := func(k string) string {
			if k == "h1" {
				return fmt.Sprint("f", rng.Intn(300))
			}
			if k == "h2" && rng.Intn(150) == 0 {
				return strings.Repeat("F", 65)
			}
			return fmt.Sprint("f", rng.Intn(700))
		}
		value := func(k string) string {
			switch rng.Intn(60) {
			case 0:
				if k == "h2" {
					return strings.Repeat("v", 65)
				}
			case 1:
				return "abc"
			}
			return strconv.Itoa(rng.Intn(2000) - 1000)
		}
		member := func(k string) string {
			switch {
			case k == "s1":
				return strconv.Itoa(rng.Intn(400) - 100)
			case k == "s3" && rng.Intn(20) == 0:
				return fmt.Sprint("s", rng.Intn(50))
			case k == "s3" && rng.Intn(40) == 0:
				return strings.Repeat("L", 70)
			}
			return strconv.Itoa(rng.Intn(800) - 100)
		}
		hkeys := []string{"h1", "h2", "h3"}
		skeys := []string{"s1", "s2", "s3"}
		hkey := func() string { return hkeys[rng.Intn(len(hkeys))] }
		skey := func() string { return skeys[rng.Intn(len(skeys))] }
		seen := map[string]int{} // OBJECT ENCODING replies, to check both encodings were met
		for i := 0; i < 5000; i++ {
			var args []string
			unordered := false
			listing := "" // the key whose listing's order depends on its encoding
			switch op := rng.Intn(30); op {
			case 0, 1, 2, 3:
				k := hkey()
				args = []string{"HSET", k}
				for n := rng.Intn(30) + 1; n > 0; n-- {
					args = append(args, field(k), value(k))
				}
			case 4:
				k := hkey()
				args = []string{"HDEL", k}
				for n := rng.Intn(40) + 1; n > 0; n-- {
					args = append(args, field(k))
				}
			case 5:
				k := hkey()
				args = []string{"HINCRBY", k, field(k), strconv.Itoa(rng.Intn(100) - 50)}
			case 6:
				k := hkey()
				args = []string{"HINCRBYFLOAT", k, field(k), []string{"0.1", "-2.5", "1e3", "3"}[rng.Intn(4)]}
			case 7:
				k := hkey()
				args = []string{"HSETNX", k, field(k), value(k)}
			case 8:
				k := hkey()
				args = []string{"HMGET", k, field(k), field(k), field(k)}
			case 9:
				k := hkey()
				args = []string{[]string{"HGET", "HEXISTS", "HSTRLEN"}[rng.Intn(3)], k, field(k)}
			case 10:
				k := hkey()
				args, listing = []string{[]string{"HGETALL", "HKEYS", "HVALS"}[rng.Intn(3)], k}, k
			case 11:
				k := hkey()
				args, listing = []string{"HRANDFIELD", k, "100000"}, k
			case 12, 13, 14, 15, 16, 17: // SADD two times in three
				k := skey()
				args = []string{"SADD", k}
				if op >= 16 {
					args[0] = "SREM"
				}
				for n := rng.Intn(40) + 1; n > 0; n-- {
					args = append(args, member(k))
				}
			case 18:
				k := skey()
				args = []string{"SMISMEMBER", k, member(k), member(k)}
			case 19:
				k := skey()
				args = []string{[]string{"SISMEMBER", "SCARD"}[rng.Intn(2)], k, member(k)}
				if args[0] == "SCARD" {
					args = args[:2]
				}
			case 20:
				k := skey()
				args, listing = []string{"SMEMBERS", k}, k
			case 21:
				args, unordered = []string{[]string{"SINTER", "SUNION", "SDIFF"}[rng.Intn(3)], skey(), skey()}, true
			case 22:
				args = []string{[]string{"SINTERSTORE", "SUNIONSTORE", "SDIFFSTORE"}[rng.Intn(3)], skey(), skey(), skey()}
			case 23:
				args = []string{"SINTERCARD", "2", skey(), skey(), "LIMIT", strconv.Itoa(rng.Intn(20))}
			case 24:
				k := skey()
				args = []string{"SMOVE", k, skey(), member(k)}
			case 25:
				k := skey()
				args, listing = []string{"SRANDMEMBER", k, "100000"}, k
			case 26:
				args = []string{"OBJECT", "ENCODING", []string{hkey(), skey()}[rng.Intn(2)]}
			case 27:
				if rng.Intn(10) == 0 { // empties a set, deterministically
					k := skey()
					args, listing = []string{"SPOP", k, "100000"}, k
				} else {
					args = []string{"HLEN", hkey()}
				}
			default:
				args = []string{"SCARD", skey()}
			}
			if listing != "" {
				unordered = ref.Do("OBJECT", "ENCODING", listing) == "$9\r\nhashtable\r\n"
				got.Do("OBJECT", "ENCODING", listing)
			}
			want, have := ref.Do(args...), got.Do(args...)
			if args[0] == "OBJECT" {
				seen[args[2][:1]+" "+want]++
			}
			if want == have {
				continue
			}
			if unordered {
				cw, ch := canonicalReply(t, want), canonicalReply(t, have)
				if proto == 2 && args[0] == "HGETALL" {
					cw, ch = flatPairs(t, want), flatPairs(t, have)
				}
				if cw == ch {
					continue
				}
			}
			t.Fatalf("op %d %.200q:\nredis: %.500q\nshoal: %.500q", i, args, want, have)
		}
		for _, enc := range []string{"h $8\r\nlistpack\r\n", "h $9\r\nhashtable\r\n", "s $6\r\nintset\r\n", "s $9\r\nhashtable\r\n"} {
			if seen[enc] < 5 {
				t.Errorf("encoding %q met %d times: the random walk does not cover both encodings (%v)", enc, seen[enc], seen)
			}
		}
		// Whole iterations by HSCAN and SSCAN return the same elements.
		for _, k := range append(hkeys, skeys...) {
			scanAll := func(conn *rawConn) []string {
				cmd := "SSCAN"
				if k[0] == 'h' {
					cmd = "HSCAN"
				}
				var all []string
				cursor := "0"
				for calls := 0; calls < 100000; calls++ {
					v, err := parseRESP(bufio.NewReader(strings.NewReader(conn.Do(cmd, k, cursor, "COUNT", "7"))))
					if err != nil || len(v.elems) != 2 {
						t.Fatalf("%s %s: %v %v", cmd, k, v, err)
					}
					cursor = strings.SplitN(v.elems[0].line, "|", 2)[1]
					for _, e := range v.elems[1].elems {
						all = append(all, e.line)
					}
					if cursor == "0" {
						break
					}
				}
				if k[0] == 'h' {
					var pairs []string
					for i := 0; i+1 < len(all); i += 2 {
						pairs = append(pairs, all[i]+"="+all[i+1])
					}
					all = pairs
				}
				slices.Sort(all)
				return slices.Compact(all) // a hashtable scan may repeat elements
			}
			if want, have := scanAll(ref), scanAll(got); !slices.Equal(want, have) {
				t.Errorf("a whole scan of %s: redis %d elements, shoal %d", k, len(want), len(have))
			}
		}
	})
}
