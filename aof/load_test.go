package aof

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func cmds(args ...[]string) []byte {
	var b []byte
	for _, a := range args {
		bs := make([][]byte, len(a))
		for i, s := range a {
			bs[i] = []byte(s)
		}
		b = AppendCommand(b, bs...)
	}
	return b
}

func loadBytes(t *testing.T, data []byte, repair bool) ([]string, LoadStats, string, error) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "appendonly.aof")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	var got []string
	st, err := Load(path, repair, func(args [][]byte) error {
		s := make([]string, len(args))
		for i, a := range args {
			s[i] = string(a)
		}
		got = append(got, strings.Join(s, " "))
		return nil
	}, nil)
	return got, st, path, err
}

func TestLoadReplaysInOrder(t *testing.T) {
	data := cmds([]string{"SELECT", "0"}, []string{"SET", "k", "v\r\nwith crlf"}, []string{"INCR", "n"}, []string{"SET", "empty", ""})
	got, st, _, err := loadBytes(t, data, false)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"SELECT 0", "SET k v\r\nwith crlf", "INCR n", "SET empty "}
	if strings.Join(got, "|") != strings.Join(want, "|") || st.Commands != 4 || st.Bytes != int64(len(data)) {
		t.Fatalf("got %q %+v", got, st)
	}
}

func TestLoadMissingFileIsEmpty(t *testing.T) {
	st, err := Load(filepath.Join(t.TempDir(), "none.aof"), false, func([][]byte) error { return errors.New("called") }, nil)
	if err != nil || st.Commands != 0 {
		t.Fatal(st, err)
	}
}

// TestLoadTruncatedTail cuts a valid file at every byte inside its last
// command: each cut is repaired back to the whole commands before it.
func TestLoadTruncatedTail(t *testing.T) {
	head := cmds([]string{"SET", "a", "1"}, []string{"SET", "b", "2"})
	last := cmds([]string{"SET", "c", "value"})
	for cut := 1; cut < len(last); cut++ {
		data := append(append([]byte{}, head...), last[:cut]...)
		got, st, path, err := loadBytes(t, data, true)
		if err != nil {
			t.Fatalf("cut %d: %v", cut, err)
		}
		after, _ := os.ReadFile(path)
		if len(got) != 2 || st.Truncated != int64(cut) || !bytes.Equal(after, head) {
			t.Fatalf("cut %d: %d commands, truncated %d, file %q", cut, len(got), st.Truncated, after)
		}
		if _, _, _, err := loadBytes(t, data, false); err == nil || !strings.Contains(err.Error(), fmt.Sprintf("byte offset %d ", len(head))) {
			t.Fatalf("cut %d without repair: %v", cut, err)
		}
	}
}

func TestLoadCorruptMiddleNamesOffset(t *testing.T) {
	good := cmds([]string{"SET", "a", "1"})
	cases := map[string]string{
		"not a multibulk": "+OK\r\n",
		"bad count":       "*x\r\n",
		"zero count":      "*0\r\n",
		"bad bulk header": "*1\r\n:3\r\n",
		"negative bulk":   "*1\r\n$-1\r\n",
		"huge bulk":       "*1\r\n$999999999999\r\n",
		"no crlf":         "*1\r\n$3\r\nSETxx",
	}
	for name, bad := range cases {
		data := append(append(append([]byte{}, good...), bad...), good...)
		_, _, path, err := loadBytes(t, data, true)
		var ce *CorruptError
		if !errors.As(err, &ce) || ce.Offset != int64(len(good)) {
			t.Errorf("%s: %v, want a CorruptError at %d", name, err, len(good))
			continue
		}
		if after, _ := os.ReadFile(path); !bytes.Equal(after, data) {
			t.Errorf("%s: the file was changed", name)
		}
	}
}

func TestLoadStopsAtExecError(t *testing.T) {
	path := filepath.Join(t.TempDir(), "a.aof")
	data := cmds([]string{"SET", "a", "1"}, []string{"BOGUS"})
	_ = os.WriteFile(path, data, 0o644)
	_, err := Load(path, true, func(args [][]byte) error {
		if string(args[0]) == "BOGUS" {
			return errors.New("unknown command")
		}
		return nil
	}, nil)
	if first := len(cmds([]string{"SET", "a", "1"})); err == nil || !strings.Contains(err.Error(), fmt.Sprintf("byte offset %d:", first)) {
		t.Fatal(err)
	}
}

// FuzzLoad: any file either loads, is repaired, or is refused with an
// error; never a panic or a hang. A repaired file then loads cleanly.
func FuzzLoad(f *testing.F) {
	f.Add(cmds([]string{"SET", "a", "1"}))
	f.Add([]byte("*2\r\n$3\r\nDEL\r\n$1"))
	f.Add([]byte("*1\r\n$-5\r\n"))
	f.Add([]byte("garbage"))
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(dir, "f.aof")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		st, err := Load(path, true, func([][]byte) error { return nil }, nil)
		if err != nil {
			return
		}
		if st.Truncated > 0 {
			st2, err := Load(path, false, func([][]byte) error { return nil }, nil)
			if err != nil || st2.Commands != st.Commands {
				t.Fatalf("repaired file does not load cleanly: %v (%d vs %d commands)", err, st2.Commands, st.Commands)
			}
		}
	})
}

// TestLoadCutsIncompleteTransaction: a file that ends inside MULTI (a crash
// before the EXEC record was written) is cut back to before the MULTI, so
// a replay applies a transaction whole or not at all; without repair it is
// an error naming the MULTI's offset. A complete transaction stays.
func TestLoadCutsIncompleteTransaction(t *testing.T) {
	head := cmds([]string{"SET", "a", "1"}, []string{"multi"}, []string{"INCR", "a"}, []string{"exec"})
	tail := cmds([]string{"MULTI"}, []string{"INCR", "a"}, []string{"INCR", "b"})
	for cut := 0; cut <= len(tail); cut++ {
		data := append(append([]byte{}, head...), tail[:cut]...)
		got, st, path, err := loadBytes(t, data, true)
		if err != nil {
			t.Fatalf("cut %d: %v", cut, err)
		}
		after, _ := os.ReadFile(path)
		if !bytes.Equal(after, head) || st.Bytes != int64(len(head)) || st.Truncated != int64(cut) {
			t.Fatalf("cut %d: file %q, stats %+v", cut, after, st)
		}
		if len(got) < 4 || strings.Join(got[:4], "|") != "SET a 1|multi|INCR a|exec" {
			t.Fatalf("cut %d: replayed %q", cut, got)
		}
		if cut == 0 {
			continue
		}
		if _, _, _, err := loadBytes(t, data, false); err == nil || !strings.Contains(err.Error(), fmt.Sprintf("byte offset %d ", len(head))) {
			t.Fatalf("cut %d without repair: %v", cut, err)
		}
	}
}
