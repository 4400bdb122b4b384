package kv_test

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestKVKnowsNoSockets: kv is commands over a store. The connection side
// (event loops, the HTTP and frame protocols) is the serving edge's
// (package server); a kv file importing one of them puts it back.
func TestKVKnowsNoSockets(t *testing.T) {
	forbidden := []string{
		"github.com/shoalkv/shoal/eventloop",
		"github.com/shoalkv/shoal/proto/http1",
		"github.com/shoalkv/shoal/proto/frame",
		"github.com/shoalkv/shoal/server",
		"net",
	}
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), name, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		checked++
		for _, imp := range f.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			for _, bad := range forbidden {
				if path == bad || strings.HasPrefix(path, bad+"/") {
					t.Errorf("%s imports %s", name, path)
				}
			}
		}
	}
	if checked < 20 {
		t.Fatalf("checked %d files; is the test running in kv/?", checked)
	}
}
