package kv

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/shoalkv/shoal/config"
)

// The aclfile: one user per line, "user <name> <rules>...", as ACL SAVE
// writes it and Redis 7.0 reads it. Blank lines are allowed, comments are
// not (ACL SAVE would lose them). A file with any error changes nothing,
// and the error names the file and line.

// loadACLFile replaces the users with the file's. The default user stays
// the same object (connections point at it) and takes the file's rules,
// or the startup defaults if the file has none; the connections of every
// other user are closed. It returns Redis's error text, "" on success.
func (h *Handler) loadACLFile(cl *client, file string) string {
	users, errText := parseACLFile(file)
	if errText != "" {
		return errText
	}
	a := &h.acl
	a.mu.Lock()
	old := a.users
	def := a.def
	if r, ok := users["default"]; ok {
		def.rules.Store(r.load())
	} else {
		def.rules.Store(defaultRules())
	}
	users["default"] = def
	a.users = users
	a.mu.Unlock()
	h.refreshAuthRequired()
	var gone []*aclUser
	for name, u := range old {
		if name != "default" {
			gone = append(gone, u)
		}
	}
	h.disconnectUsers(cl, gone)
	return ""
}

// parseACLFile reads the users of file, or returns why it cannot, naming
// every line in error as Redis does.
func parseACLFile(file string) (map[string]*aclUser, string) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Sprintf("Error loading ACLs, opening file '%s': %s", file, errnoText(err))
	}
	users := make(map[string]*aclUser)
	var errs strings.Builder
	for i, line := range strings.Split(string(data), "\n") {
		n := i + 1
		line = strings.Trim(line, " \t\r\n")
		if line == "" {
			continue
		}
		argv := strings.Split(line, " ")
		if argv[0] != "user" || len(argv) < 2 {
			fmt.Fprintf(&errs, "%s:%d should start with user keyword followed by the username. ", file, n)
			continue
		}
		name := argv[1]
		if hasSpaceOrNul(name) {
			fmt.Fprintf(&errs, "'%s:%d: username '%s' contains invalid characters. ", file, n, name)
			continue
		}
		if users[name] != nil {
			fmt.Fprintf(&errs, "WARNING: Duplicate user '%s' found on line %d. ", name, n)
			continue
		}
		u := &aclUser{name: name}
		users[name] = u
		r := newRules()
		ops, open := mergeSelectorArgs(argv[2:])
		if open >= 0 {
			fmt.Fprintf(&errs, "%s:%d: Unmatched parenthesis in selector definition.", file, n)
			ops = nil
		}
		syntax := false
		for _, op := range ops {
			op = strings.Trim(op, "\t\r\n")
			msg := r.apply(op)
			switch {
			case msg == "":
			case msg == aclErrUnknown:
				fmt.Fprintf(&errs, "%s:%d: Error in applying operation '%s': %s. ", file, n, op, msg)
			case !syntax:
				fmt.Fprintf(&errs, "%s:%d: %s. ", file, n, msg)
				syntax = true
			}
		}
		r.finish()
		u.rules.Store(r)
	}
	if errs.Len() > 0 {
		errs.WriteString("WARNING: ACL errors detected, no change to the previously active ACL rules was performed")
		return nil, errs.String()
	}
	return users, ""
}

// errnoText is the strerror part of an *os.PathError ("No such file or
// directory"), as Redis words it.
func errnoText(err error) string {
	if pe, ok := err.(*os.PathError); ok {
		err = pe.Err
	}
	s := err.Error()
	if s != "" {
		s = strings.ToUpper(s[:1]) + s[1:]
	}
	return s
}

// saveACLFile writes every user to file through a temporary file renamed
// over it, as Redis does.
func (h *Handler) saveACLFile(file string) error {
	var b strings.Builder
	for _, u := range h.usersSorted() {
		b.WriteString("user " + u.name + " " + u.load().describe() + "\n")
	}
	tmp := file + ".tmp-" + strconv.Itoa(os.Getpid()) + "-" + strconv.FormatInt(nowMillis(), 10)
	if err := os.WriteFile(tmp, []byte(b.String()), 0o644); err != nil {
		return err
	}
	if err := os.Rename(tmp, file); err != nil {
		_ = os.Remove(tmp)
		return err
	}
	return nil
}

// LoadACLFile loads the users of the configuration file's user lines
// or, if one is set, of the aclfile (not both, as Redis): the server calls
// it at startup and refuses to start on an error, which names the file and
// line of each bad rule.
func (h *Handler) LoadACLFile() error {
	file := *h.acl.file.Load()
	lines := h.params.Users()
	if file != "" && len(lines) > 0 {
		return errors.New("configuring users in the configuration file and an aclfile at the same time is invalid, as in Redis: define either an aclfile or user lines, not both")
	}
	if len(lines) > 0 {
		return h.loadConfigUsers(lines)
	}
	if file == "" {
		return nil
	}
	if msg := h.loadACLFile(nil, file); msg != "" {
		return fmt.Errorf("aborting startup because of ACL errors: %s", msg)
	}
	return nil
}

// loadConfigUsers applies the configuration file's user lines at startup,
// as Redis's ACLLoadConfiguredUsers: the default user is reset first.
func (h *Handler) loadConfigUsers(lines []config.UserDirective) error {
	for _, d := range lines {
		name := d.Args[0]
		if hasSpaceOrNul(name) {
			return fmt.Errorf("%s:%d: spaces not allowed in ACL usernames", d.File, d.Line)
		}
		ops, open := mergeSelectorArgs(d.Args[1:])
		if open >= 0 {
			return fmt.Errorf("%s:%d: unmatched parenthesis in acl selector starting at '%s'", d.File, d.Line, d.Args[1+open])
		}
		r := newRules()
		if name == "default" {
			_ = r.apply("reset") // which Redis applies to the default user, flagging it sanitize-payload
		}
		for _, op := range ops {
			if msg := r.apply(op); msg != "" {
				return fmt.Errorf("%s:%d: Error loading ACL rule '%s' for the user named '%s': %s", d.File, d.Line, op, name, msg)
			}
		}
		r.finish()
		h.acl.mu.Lock()
		u := h.acl.users[name]
		if u == nil {
			u = &aclUser{name: name}
			h.acl.users[name] = u
		}
		u.rules.Store(r)
		h.acl.mu.Unlock()
	}
	h.refreshAuthRequired()
	return nil
}
