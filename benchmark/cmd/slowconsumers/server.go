package main

import (
	"path/filepath"

	"github.com/shoalkv/shoal/benchmark/internal/proc"
)

// server is one server under test: a name for the table and its command line
// on a port, with a working directory of its own.
type server struct {
	name string
	argv func(port int, dir string) []string
}

func shoalServer(path string) server {
	return server{name: "shoal", argv: func(port int, dir string) []string {
		return proc.ShoalArgv(path, port, "--dir", dir)
	}}
}

func redisServer(path string) server {
	return server{name: "redis", argv: func(port int, dir string) []string {
		return proc.RedisArgv(path, port, "--dir", dir)
	}}
}

// start runs s with its files in dir and waits for it to answer PING.
func start(s server, dir string) (*proc.Server, error) {
	return proc.Start(proc.Spec{Name: s.name, Argv: func(port int) []string { return s.argv(port, dir) }})
}

// buildShoal builds ./cmd/shoal of this repository into dir.
func buildShoal(dir string) (string, error) {
	root, err := proc.ModuleRoot("slowconsumers")
	if err != nil {
		return "", err
	}
	out := filepath.Join(dir, "shoal")
	return out, proc.GoBuild(root, "./cmd/shoal", out)
}
