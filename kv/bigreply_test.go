package kv_test

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"strconv"
	"testing"
	"time"

	"github.com/shoalkv/shoal/eventloop"
	"github.com/shoalkv/shoal/kv"
)

// readBulk reads one bulk string reply of the expected length and checks
// its bytes, without keeping a copy of more than a buffer.
func readBulk(t *testing.T, rd *bufio.Reader, want []byte) {
	t.Helper()
	line, err := rd.ReadString('\n')
	if err != nil {
		t.Fatalf("bulk header: %v", err)
	}
	if line != "$"+strconv.Itoa(len(want))+"\r\n" {
		t.Fatalf("bulk header %q, want length %d", line, len(want))
	}
	got := make([]byte, len(want)+2)
	if _, err := io.ReadFull(rd, got); err != nil {
		t.Fatalf("bulk body of %d bytes: %v", len(want), err)
	}
	if !bytes.Equal(got[:len(want)], want) || string(got[len(want):]) != "\r\n" {
		t.Fatalf("bulk body of %d bytes damaged", len(want))
	}
}

// TestPipelinedBigRepliesAllArrive: 1,000 pipelined GETs of a 100 KB value
// (100 MB of replies from 30 KB of requests, one read) reach a client that
// reads at full speed, all of them, as redis-server delivers them: the
// handler stops executing while the output is above the high-water mark,
// and so never runs into the hard limit (set low here: 8 MiB).
func TestPipelinedBigRepliesAllArrive(t *testing.T) {
	srv := startShoal(t, kv.Options{}, eventloop.Options{OutputHighWater: 1 << 20, OutputLowWater: 256 << 10, OutputHardLimit: 8 << 20})
	value := bytes.Repeat([]byte("0123456789"), 10<<10)
	c := dialRaw(t, srv.addr)
	if r := c.Do("SET", "big", string(value)); r != "+OK\r\n" {
		t.Fatalf("SET: %q", r)
	}
	const n = 1000
	go c.C.Write(bytes.Repeat(encodeCommand([]string{"GET", "big"}), n))
	time.Sleep(200 * time.Millisecond) // a late start: the output backs up first
	_ = c.C.SetReadDeadline(time.Now().Add(60 * time.Second))
	rd := bufio.NewReaderSize(c.C, 1<<20)
	for i := 0; i < n; i++ {
		readBulk(t, rd, value)
	}
	if r := c.Do("PING"); r != "+PONG\r\n" {
		t.Fatalf("PING after the replies: %q", r)
	}
}

// TestValueLargerThanOutputHardLimitReadsBack: a 70 MB value (SETRANGE can
// build it; proto-max-bulk-len allows 512 MB) is larger than the loop's
// 64 MiB OutputHardLimit, and GET still returns all of it: one reply is
// never capped below the largest value the server accepts.
func TestValueLargerThanOutputHardLimitReadsBack(t *testing.T) {
	srv := startShoal(t, kv.Options{}, eventloop.Options{})
	const size = 70_000_000
	c := dialRaw(t, srv.addr)
	if r := c.Do("SETRANGE", "big", strconv.Itoa(size-1), "x"); r != ":"+strconv.Itoa(size)+"\r\n" {
		t.Fatalf("SETRANGE: %q", r)
	}
	for round := 0; round < 2; round++ {
		c.Send(encodeCommand([]string{"GET", "big"}))
		_ = c.C.SetReadDeadline(time.Now().Add(60 * time.Second))
		want := make([]byte, size)
		want[size-1] = 'x'
		readBulk(t, c.Rd, want)
	}
	if r := c.Do("STRLEN", "big"); r != fmt.Sprintf(":%d\r\n", size) {
		t.Fatalf("STRLEN: %q", r)
	}
}
