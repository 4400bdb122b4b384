package config

import (
	"flag"
	"fmt"
	"strings"
)

// EnvName is the environment variable of a setting: SHOAL_ and the name in
// upper case with dashes as underscores (SHOAL_MAXMEMORY_POLICY).
func EnvName(name string) string {
	return "SHOAL_" + strings.ToUpper(strings.ReplaceAll(name, "-", "_"))
}

// ParseFlags sets the table from the command line and the environment:
// each setting takes its flag (--name, or an alias) if one is given, else
// its variable (EnvName of the name or an alias) if set and not empty, else
// keeps its default. A value its kind refuses is an error naming the flag
// or variable and the value. Arguments other than flags are refused.
func (t *Table) ParseFlags(fs *flag.FlagSet, args []string, getenv func(string) string) error {
	flags := make(map[string]*string)
	for _, r := range t.rows {
		flags[r.Name] = fs.String(r.Name, r.Default, r.Usage+" ("+r.Kind.Values()+")")
		for _, a := range r.Aliases {
			flags[a] = fs.String(a, r.Default, "the same as --"+r.Name)
		}
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	given := make(map[string]bool)
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, r := range t.rows {
		names := append([]string{r.Name}, r.Aliases...)
		v, from := lookup(names, func(n string) (string, bool) { return *flags[n], given[n] }, func(n string) string { return "--" + n })
		if from == "" {
			v, from = lookup(names, func(n string) (string, bool) { e := getenv(EnvName(n)); return e, e != "" }, EnvName)
		}
		if from == "" {
			continue
		}
		canon, err := r.Kind.Parse(v)
		if err != nil {
			return fmt.Errorf("%s %q: %v", from, v, err)
		}
		r.value, r.explicit = canon, true
	}
	return nil
}

// lookup returns the first of names that has a value, and where it came
// from ("" if none has).
func lookup(names []string, value func(string) (string, bool), source func(string) string) (string, string) {
	for _, n := range names {
		if v, ok := value(n); ok {
			return v, source(n)
		}
	}
	return "", ""
}
