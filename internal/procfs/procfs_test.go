//go:build linux

package procfs

import (
	"os"
	"testing"
)

func TestOwnProcess(t *testing.T) {
	pid := os.Getpid()
	buf := make([]byte, 8<<20)
	for i := range buf {
		buf[i] = byte(i)
	}
	rss, err := RSS(pid)
	if err != nil || rss < int64(len(buf)) {
		t.Errorf("RSS = %d, %v; want at least the %d bytes just touched", rss, err, len(buf))
	}
	x := 0
	for i := 0; i < 200_000_000; i++ {
		x += i
	}
	_ = x
	if ticks, err := CPUTicks(pid); err != nil || ticks <= 0 {
		t.Errorf("CPUTicks = %d, %v; want > 0 after burning CPU", ticks, err)
	}
}

func TestMissingProcess(t *testing.T) {
	if _, err := CPUTicks(1 << 30); err == nil {
		t.Error("CPUTicks of a missing process: no error")
	}
	if _, err := RSS(1 << 30); err == nil {
		t.Error("RSS of a missing process: no error")
	}
}
