// Package logtest holds a log destination for tests: goroutine-safe, readable
// while servers write to it. It imports nothing of Shoal, so any package's
// tests (eventloop's on every OS) can use it.
package logtest

import (
	"bytes"
	"log/slog"
	"sync"
)

// Log is a slog destination the loops may write while a test reads it.
type Log struct {
	mu sync.Mutex
	b  bytes.Buffer
}

// Logger returns a text logger writing to l at every level.
func (l *Log) Logger() *slog.Logger {
	return slog.New(slog.NewTextHandler(l, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

func (l *Log) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

// String returns everything logged so far.
func (l *Log) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
