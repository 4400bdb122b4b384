// Package proc runs the processes the benchmark commands measure: it finds
// the repository they build shoal from, builds its commands, and starts and
// stops the servers under test. compare, clientbench and slowconsumers share
// it; what they read of a running process comes from internal/procfs.
package proc

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// ModuleRoot returns the repository root, where ./cmd/shoal and
// ./cmd/shoal-load build: the directory of go.work (the workspace that ties
// the shoal module and the benchmark module together), or else the parent of
// the benchmark module's go.mod. cmd names the caller in the error.
func ModuleRoot(cmd string) (string, error) {
	for _, v := range []string{"GOWORK", "GOMOD"} {
		out, err := exec.Command("go", "env", v).Output()
		if err != nil {
			return "", fmt.Errorf("go env %s: %v", v, err)
		}
		path := strings.TrimSpace(string(out))
		if path == "" || path == os.DevNull || path == "off" {
			continue
		}
		dir := filepath.Dir(path)
		if v == "GOMOD" && filepath.Base(dir) == "benchmark" {
			dir = filepath.Dir(dir)
		}
		return dir, nil
	}
	return "", fmt.Errorf("run %s inside the shoal repository", cmd)
}

// GoBuild builds the command pkg, a path from the repository root (such as
// "./cmd/shoal" or "./benchmark/cmd/baseline"), into the file out. Packages
// under ./benchmark/ build inside the benchmark module. The error carries the
// compiler's output.
func GoBuild(root, pkg, out string) error {
	dir := root
	if rest, ok := strings.CutPrefix(pkg, "./benchmark/"); ok {
		dir, pkg = filepath.Join(root, "benchmark"), "./"+rest
	}
	cmd := exec.Command("go", "build", "-o", out, pkg)
	cmd.Dir = dir
	if msg, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go build %s: %v\n%s", pkg, err, msg)
	}
	return nil
}
