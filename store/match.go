package store

// Match reports whether s matches the Redis glob pattern: '*' any run, '?' any byte,
// '[abc]' / '[a-z]' / '[^x]' classes (ranges may be reversed; an unterminated class runs
// to the end of the pattern), and '\' escaping the next byte. It follows the semantics of
// Redis's stringmatchlen but backtracks iteratively, so it runs in O(len(pattern)*len(s))
// whatever the number of stars. Like Redis, it matches the empty string only with the
// empty pattern or a lone '*'.
func Match(pattern, s []byte) bool {
	if len(s) == 0 {
		// stringmatchlen never enters its loop for an empty string, so only the
		// empty pattern matches it ("**" and "?*" do not); a lone "*" does too,
		// because KEYS and SCAN take it as "every key" without matching.
		return len(pattern) == 0 || string(pattern) == "*"
	}
	p, i := 0, 0
	starP, starI := -1, 0
	for i < len(s) {
		if p < len(pattern) && pattern[p] == '*' {
			for p < len(pattern) && pattern[p] == '*' {
				p++
			}
			if p == len(pattern) {
				return true
			}
			starP, starI = p, i
			continue
		}
		if p < len(pattern) {
			if ok, next := matchOne(pattern, p, s[i]); ok {
				p, i = next, i+1
				continue
			}
		}
		// Every token but '*' consumes exactly one byte, so retrying from the last star
		// with one more byte swallowed is enough: earlier stars never need to grow.
		if starP < 0 {
			return false
		}
		starI++
		p, i = starP, starI
	}
	for p < len(pattern) && pattern[p] == '*' {
		p++
	}
	return p == len(pattern)
}

// matchOne matches byte c against the single token at pattern[p] (not '*') and returns
// the index after the token.
func matchOne(pattern []byte, p int, c byte) (bool, int) {
	switch pattern[p] {
	case '?':
		return true, p + 1
	case '\\':
		if p+1 < len(pattern) {
			return pattern[p+1] == c, p + 2
		}
		return c == '\\', p + 1
	case '[':
		return matchClass(pattern, p+1, c)
	default:
		return pattern[p] == c, p + 1
	}
}

// matchClass matches c against the class whose body starts at pattern[i].
func matchClass(pattern []byte, i int, c byte) (bool, int) {
	not := i < len(pattern) && pattern[i] == '^'
	if not {
		i++
	}
	match := false
	for i < len(pattern) {
		switch {
		case pattern[i] == '\\' && i+1 < len(pattern):
			i++
			if pattern[i] == c {
				match = true
			}
		case pattern[i] == ']':
			return match != not, i + 1
		case i+2 < len(pattern) && pattern[i+1] == '-':
			lo, hi := pattern[i], pattern[i+2]
			if lo > hi {
				lo, hi = hi, lo
			}
			if lo <= c && c <= hi {
				match = true
			}
			i += 2
		case pattern[i] == c:
			match = true
		}
		i++
	}
	return match != not, len(pattern)
}
