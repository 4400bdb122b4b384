package config

import (
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Param is one server setting: one row of the table.
type Param struct {
	Name    string   // as redis.conf and CONFIG spell it; the flag is --Name
	Aliases []string // other names it answers to, as a flag, a variable and in CONFIG
	Kind    Kind     // what values it takes
	Default string   // in any form Kind accepts
	RunTime bool     // CONFIG SET may change it while the server runs
	Usage   string   // one line for --help
	// Inert: a Redis directive taken only at the value Redis's sample
	// configuration sets, which changes nothing in Shoal (params.go:
	// inertParams); their --help line begins "taken only as".
	Inert bool
}

// Owner is the code that holds a setting's value while the server runs
// (see Table.Own). Calls are made with the table's lock held, so they must
// not call back into the table.
type Owner struct {
	// Get returns the value in use, in the kind's canonical form.
	Get func() string
	// Set applies a value the kind and Check accepted, in canonical form;
	// nil for settings read only at startup.
	Set func(v string)
	// Check, if set, refuses a value the kind accepts but the owner cannot
	// take now; its error text reaches the client as the reason.
	Check func(v string) error
}

// Table holds the value of every setting of a list of Params.
// It is safe for concurrent use.
type Table struct {
	mu     sync.Mutex
	rows   []*row
	byName map[string]*row // lower-case names and aliases
	users  []UserDirective // the configuration file's user lines, in order
}

// UserDirective is a configuration file's "user <name> <rules>..." line,
// which package kv applies (Redis's ACL users; not a parameter).
type UserDirective struct {
	File string
	Line int
	Args []string // the name, then the rules
}

// Users returns the configuration file's user lines.
func (t *Table) Users() []UserDirective {
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([]UserDirective(nil), t.users...)
}

type row struct {
	Param
	value    string // canonical; what Get reports until an owner takes over
	explicit bool   // value came from a flag or the environment, not Default
	owner    *Owner
}

// New returns a table of params with their defaults. It panics if two
// rows share a name or a default is not a value of its kind: the list is
// code, not input.
func New(params []Param) *Table {
	t := &Table{byName: make(map[string]*row)}
	for _, p := range params {
		v, err := p.Kind.Parse(p.Default)
		if err != nil {
			panic(fmt.Sprintf("config: default %q of %s: %v", p.Default, p.Name, err))
		}
		r := &row{Param: p, value: v}
		for _, n := range append([]string{p.Name}, p.Aliases...) {
			if _, dup := t.byName[strings.ToLower(n)]; dup {
				panic("config: two parameters named " + n)
			}
			t.byName[strings.ToLower(n)] = r
		}
		t.rows = append(t.rows, r)
	}
	return t
}

func (t *Table) row(name string) *row {
	r := t.byName[strings.ToLower(name)]
	if r == nil {
		panic("config: no parameter named " + name)
	}
	return r
}

// Has reports whether the table has a setting of that name or alias.
func (t *Table) Has(name string) bool {
	_, ok := t.byName[strings.ToLower(name)]
	return ok
}

// Get returns the setting's value in canonical form: its owner's if it has
// one, else the table's. It panics for a name the table lacks.
func (t *Table) Get(name string) string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.row(name).get()
}

func (r *row) get() string {
	if r.owner != nil {
		return r.owner.Get()
	}
	return r.value
}

// Int returns an integer or memory setting (in bytes).
func (t *Table) Int(name string) int64 {
	n, err := strconv.ParseInt(t.Get(name), 10, 64)
	if err != nil {
		panic(fmt.Sprintf("config: %s is not an integer: %v", name, err))
	}
	return n
}

// Bool returns a yes/no setting.
func (t *Table) Bool(name string) bool { return t.Get(name) == "yes" }

// Duration returns a duration setting.
func (t *Table) Duration(name string) time.Duration {
	d, err := parseDuration(t.Get(name))
	if err != nil {
		panic(fmt.Sprintf("config: %s is not a duration: %v", name, err))
	}
	return d
}

// Own hands the setting over to its owner: from now on Get reads o.Get and
// CONFIG SET applies through o.Set. A value given on the command line or in
// the environment is applied to the owner now (a default is not: the owner
// may have been configured otherwise, by an embedder). It panics for a name
// the table lacks, or when a run-time setting's owner has no Set.
func (t *Table) Own(name string, o Owner) {
	t.mu.Lock()
	defer t.mu.Unlock()
	r := t.row(name)
	if r.RunTime && o.Set == nil {
		panic("config: the owner of " + name + ", a run-time setting, cannot set it")
	}
	if r.explicit && o.Set != nil {
		o.Set(r.value)
	}
	r.owner = &o
}

// Match returns the settings whose name matches one of patterns, in table
// order, with their values. A pattern without glob characters names a
// setting (or alias) exactly, in any case, and is answered with the name
// as given, as Redis does; others are matched with glob against the
// lower-case pattern and each row's name and aliases.
func (t *Table) Match(patterns []string, glob func(pattern, name string) bool) (names, values []string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, r := range t.rows {
		exact := false
		for _, pat := range patterns {
			if !strings.ContainsAny(pat, "*?[") && t.byName[strings.ToLower(pat)] == r {
				names, values = append(names, pat), append(values, r.get())
				exact = true
				break
			}
		}
		if exact {
			continue
		}
		// A glob lists the name and each alias it matches, as Redis lists
		// hash-max-ziplist-entries beside hash-max-listpack-entries.
		for _, name := range append([]string{r.Name}, r.Aliases...) {
			for _, pat := range patterns {
				if strings.ContainsAny(pat, "*?[") && glob(strings.ToLower(pat), name) {
					names, values = append(names, name), append(values, r.get())
					break
				}
			}
		}
	}
	return names, values
}

// Set changes settings at run time, as CONFIG SET: pairs alternate names
// and values. Every value is checked before any is applied, so an error
// changes nothing. The error texts are redis-server 7.0's.
func (t *Table) Set(pairs ...string) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	type change struct {
		r *row
		v string
	}
	var changes []change
	seen := make(map[*row]bool)
	for i := 0; i+1 < len(pairs); i += 2 {
		name := pairs[i]
		r := t.byName[strings.ToLower(name)]
		if r == nil {
			return unknownError(name)
		}
		if !r.RunTime {
			return setError(name, "can't set immutable config")
		}
		if seen[r] {
			return setError(name, "duplicate parameter")
		}
		seen[r] = true
		changes = append(changes, change{r, pairs[i+1]})
	}
	for i, ch := range changes {
		v, err := ch.r.Kind.Parse(ch.v)
		if err == nil && ch.r.owner != nil && ch.r.owner.Check != nil {
			err = ch.r.owner.Check(v)
		}
		if err != nil {
			return setError(ch.r.Name, err.Error())
		}
		changes[i].v = v
	}
	for _, ch := range changes {
		if ch.r.owner != nil && ch.r.owner.Set != nil {
			ch.r.owner.Set(ch.v)
		} else {
			ch.r.value = ch.v
		}
	}
	return nil
}

// unknownError is Redis's reply to a name it has no setting for, which
// starts with a capital letter where its other reasons do not.
type unknownError string

func (e unknownError) Error() string {
	return "Unknown option or number of arguments for CONFIG SET - '" + string(e) + "'"
}

func setError(name, reason string) error {
	return fmt.Errorf("CONFIG SET failed (possibly related to argument '%s') - %s", name, reason)
}
