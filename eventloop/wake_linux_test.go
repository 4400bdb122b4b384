package eventloop

import (
	"encoding/binary"
	"testing"

	"golang.org/x/sys/unix"
)

// TestEnqueueCoalescesWakeups queues a batch of tasks on a loop that is not
// running: only the first may write to the eventfd.
func TestEnqueueCoalescesWakeups(t *testing.T) {
	s, err := NewServer(&lineEcho{}, Options{Addr: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	l, err := newLoop(s, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer l.poller.close()
	for i := 0; i < 100; i++ {
		if err := l.enqueue(task{kind: taskExecute}); err != nil {
			t.Fatal(err)
		}
	}
	var buf [8]byte
	if _, err := unix.Read(l.poller.wakefd, buf[:]); err != nil {
		t.Fatal(err)
	}
	if n := binary.NativeEndian.Uint64(buf[:]); n != 1 {
		t.Fatalf("%d eventfd writes for 100 queued tasks, want 1", n)
	}
	if len(l.tasks) != 100 {
		t.Fatalf("%d tasks queued, want 100", len(l.tasks))
	}
}
