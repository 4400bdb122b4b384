package main

import "testing"

func TestProtectedModeFlag(t *testing.T) {
	none := func(string) string { return "" }
	for _, tc := range []struct {
		args []string
		env  string
		want bool
	}{
		{nil, "", true}, // Redis's default
		{[]string{"--protected-mode", "no"}, "", false},
		{[]string{"--protected-mode", "YES"}, "", true},
		{nil, "no", false},
		{[]string{"--protected-mode", "yes"}, "no", true}, // an explicit flag wins
	} {
		getenv := none
		if tc.env != "" {
			getenv = func(k string) string {
				if k == "SHOAL_PROTECTED_MODE" {
					return tc.env
				}
				return ""
			}
		}
		c, err := parseConfig(tc.args, getenv)
		if err != nil {
			t.Fatalf("%q env %q: %v", tc.args, tc.env, err)
		}
		if c.Bool("protected-mode") != tc.want {
			t.Errorf("%q env %q: protected mode %v, want %v", tc.args, tc.env, c.Get("protected-mode"), tc.want)
		}
	}
	if _, err := parseConfig([]string{"--protected-mode", "maybe"}, none); err == nil {
		t.Error("--protected-mode maybe accepted")
	}
}
