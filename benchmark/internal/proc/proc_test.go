package proc

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/shoalkv/shoal/internal/redistest"
)

func TestModuleRootHoldsShoal(t *testing.T) {
	root, err := ModuleRoot("proc's test")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "cmd", "shoal")); err != nil {
		t.Errorf("ModuleRoot = %s, which has no cmd/shoal: %v", root, err)
	}
}

func TestStartAnswersAndStopEnds(t *testing.T) {
	redistest.Binary(t, "redis-server")
	s, err := Start(Spec{Name: "redis", Argv: func(port int) []string {
		return RedisArgv("redis-server", port, "--dir", t.TempDir())
	}})
	if err != nil {
		t.Fatal(err)
	}
	if err := WaitPong(s.Addr, 0); err == nil {
		t.Error("WaitPong with no time left: no error")
	}
	s.Stop()
	s.Stop() // a second Stop must not block
	if err := WaitPong(s.Addr, 200*time.Millisecond); err == nil {
		t.Errorf("%s still answers PING after Stop", s.Addr)
	}
}
