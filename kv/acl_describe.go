package kv

import (
	"math"
	"strings"
)

// How ACL LIST, ACL GETUSER and ACL SAVE write a user back as rules, the
// way Redis 7.0 does: not the rules as given but rules rebuilt from what
// the user may do: "+@all" or "-@all", then the categories that fit best
// one by one, then single commands for the difference. Redis emits those
// single commands in the order of its command dictionary, which is random
// per process; Shoal uses its table's order.

// describeCommands returns s's command rules.
func (s *aclSelector) describeCommands() string {
	var b strings.Builder
	fake := newSelector(false)
	additive := !s.future
	if additive {
		b.WriteString("-@all ")
	} else {
		b.WriteString("+@all ")
		fake.setAll(true)
	}
	temp := newSelector(false)
	copy(temp.allowed, s.allowed)
	var applied [len(aclCategories)]bool
	for {
		best := -1
		minDiff, maxSame := math.MaxInt, 0
		for j := range aclCategories {
			if applied[j] {
				continue
			}
			on, off := temp.countCategory(1 << j)
			diff, same := on, off
			if additive {
				diff, same = off, on
			}
			if same > diff && (diff < minDiff || (diff == minDiff && same > maxSame)) {
				best, minDiff, maxSame = j, diff, same
			}
		}
		if best < 0 {
			break
		}
		sign := "-@"
		if additive {
			sign = "+@"
		}
		fake.changeCategory(1<<best, additive)
		temp.changeCategory(1<<best, !additive)
		b.WriteString(sign + aclCategories[best] + " ")
		applied[best] = true
	}
	for _, cmd := range commandOrder {
		s.describeCommand(&b, fake, cmd)
		for _, sub := range cmd.subOrder {
			s.describeCommand(&b, fake, sub)
		}
		if !s.bit(cmd.statsID) {
			for _, a := range s.firstArgs[cmd.statsID] {
				b.WriteString("+" + cmd.name + "|" + a + " ")
			}
		}
	}
	return strings.TrimSuffix(b.String(), " ")
}

// describeCommand writes the rule that makes fake agree with s on cmd, if
// they differ, and applies it to fake.
func (s *aclSelector) describeCommand(b *strings.Builder, fake *aclSelector, cmd *command) {
	on := s.bit(cmd.statsID)
	if on == fake.bit(cmd.statsID) {
		return
	}
	if on {
		b.WriteByte('+')
	} else {
		b.WriteByte('-')
	}
	b.WriteString(cmd.name + " ")
	fake.changeCommand(cmd, on)
}

// countCategory counts the commands and subcommands of a category s
// allows and denies.
func (s *aclSelector) countCategory(cat uint32) (on, off int) {
	cats := aclCommandCategories()
	count := func(cmd *command) {
		if cats[cmd.statsID]&cat == 0 {
			return
		}
		if s.bit(cmd.statsID) {
			on++
		} else {
			off++
		}
	}
	for _, cmd := range commandOrder {
		count(cmd)
		for _, sub := range cmd.subOrder {
			count(sub)
		}
	}
	return on, off
}

func (p keyPattern) keyRule() string {
	switch p.perm {
	case aclRead:
		return "%R~" + p.pattern
	case aclWrite:
		return "%W~" + p.pattern
	}
	return "~" + p.pattern
}

// keysRule and channelsRule are ACL GETUSER's keys and channels.
func (s *aclSelector) keysRule() string {
	if s.allKeys {
		return "~*"
	}
	parts := make([]string, len(s.keys))
	for i, k := range s.keys {
		parts[i] = k.keyRule()
	}
	return strings.Join(parts, " ")
}

func (s *aclSelector) channelsRule() string {
	if s.allChannels {
		return "&*"
	}
	parts := make([]string, len(s.channels))
	for i, c := range s.channels {
		parts[i] = "&" + c.pattern
	}
	return strings.Join(parts, " ")
}

// describe returns the selector as ACL LIST shows it.
func (s *aclSelector) describe() string {
	var b strings.Builder
	if s.allKeys {
		b.WriteString("~* ")
	} else {
		for _, k := range s.keys {
			b.WriteString(k.keyRule() + " ")
		}
	}
	if s.allChannels {
		b.WriteString("&* ")
	} else {
		b.WriteString("resetchannels ")
		for _, c := range s.channels {
			b.WriteString("&" + c.pattern + " ")
		}
	}
	b.WriteString(s.describeCommands())
	return b.String()
}

// flagNames are ACL GETUSER's flags, in Redis's order.
func (r *aclRules) flagNames() []string {
	var f []string
	if r.enabled {
		f = append(f, "on")
	} else {
		f = append(f, "off")
	}
	if r.nopass {
		f = append(f, "nopass")
	}
	switch r.sanitize {
	case aclSanitizeSkip:
		f = append(f, "skip-sanitize-payload")
	case aclSanitize:
		f = append(f, "sanitize-payload")
	}
	return f
}

// describe returns the user's rules as ACL LIST and ACL SAVE write them.
func (r *aclRules) describe() string {
	var b strings.Builder
	for _, f := range r.flagNames() {
		b.WriteString(f + " ")
	}
	for _, p := range r.passwords {
		b.WriteString("#" + p + " ")
	}
	for _, s := range r.selectors {
		if s.root {
			b.WriteString(s.describe())
		} else {
			b.WriteString(" (" + s.describe() + ")")
		}
	}
	return b.String()
}

// writeUser writes ACL GETUSER's reply.
func (cl *client) writeUser(r *aclRules) {
	cl.writeMap(6)
	cl.writeBulkStr("flags")
	flags := r.flagNames()
	cl.writeSet(len(flags))
	for _, f := range flags {
		cl.writeBulkStr(f)
	}
	cl.writeBulkStr("passwords")
	cl.writeArray(len(r.passwords))
	for _, p := range r.passwords {
		cl.writeBulkStr(p)
	}
	cl.writeSelector(r.selectors[0])
	cl.writeBulkStr("selectors")
	cl.writeArray(len(r.selectors) - 1)
	for _, s := range r.selectors[1:] {
		cl.writeMap(3)
		cl.writeSelector(s)
	}
}

func (cl *client) writeSelector(s *aclSelector) {
	cl.writeBulkStr("commands")
	cl.writeBulkStr(s.describeCommands())
	cl.writeBulkStr("keys")
	cl.writeBulkStr(s.keysRule())
	cl.writeBulkStr("channels")
	cl.writeBulkStr(s.channelsRule())
}
