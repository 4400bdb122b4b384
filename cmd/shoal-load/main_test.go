package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/shoalkv/shoal/internal/loadgen"
	"github.com/shoalkv/shoal/internal/redistest"
)

func startRedis(t testing.TB) string {
	return redistest.StartServer(t, "--protected-mode", "no")
}

func TestJSONReportParses(t *testing.T) {
	addr := startRedis(t)
	var stdout, stderr bytes.Buffer
	code, err := mainErr([]string{"-addr", addr, "-c", "3", "-P", "4", "-n", "300", "-ratio", "2:1",
		"-value-size", "100", "-dist", "zipf", "-json", "-progress", "10ms"}, &stdout, &stderr)
	if code != 0 || err != nil {
		t.Fatalf("exit %d: %v\n%s", code, err, stderr.String())
	}
	var rep loadgen.Report
	if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil {
		t.Fatalf("report is not JSON: %v\n%s", err, stdout.String())
	}
	if rep.Requests != 300 || rep.Connections != 3 || rep.Pipeline != 4 || rep.Workload != "get:2,set:1" ||
		rep.Dist != "zipf" || rep.ValueSize != 100 || rep.Mode != "closed" || rep.Throughput <= 0 || rep.LatencyUs.P99 <= 0 {
		t.Errorf("report %+v", rep)
	}
	// Not a terminal: the markers are plain lines, in order.
	out := stderr.String()
	m, d := strings.Index(out, loadgen.MarkerMeasuring+"\n"), strings.Index(out, loadgen.MarkerDone+"\n")
	if m < 0 || d < m || strings.Contains(out, "\r") {
		t.Errorf("progress output %q lacks the markers in order or redraws in place", out)
	}
}

func TestTableReport(t *testing.T) {
	addr := startRedis(t)
	var stdout, stderr bytes.Buffer
	if code, err := mainErr([]string{"-addr", addr, "-c", "2", "-n", "50", "-t", "ping", "-progress", "0"}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %v", code, err)
	}
	for _, want := range []string{"closed loop, pipeline 1, 2 connections, ping:1", "req/s", "p99.99"} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, stdout.String())
		}
	}
}

func TestBadFlagsNameValueAndLimit(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-c", "0"}, "-c 0: connections must be between 1 and"},
		{[]string{"-P", "100000"}, "-P 100000: pipeline depth must be between 1 and 65536"},
		{[]string{"-d", "0"}, "-d 0s"},
		{[]string{"-ratio", "9"}, `-ratio "9": want GET:SET`},
		{[]string{"-ratio", "0:0"}, "not both 0"},
		{[]string{"-t", "get,del"}, `unknown command "del"`},
		{[]string{"-t", "get:x"}, `weight "x"`},
		{[]string{"-dist", "pareto"}, `-dist "pareto"`},
		{[]string{"-dist", "zipf", "-zipf-s", "1"}, "must be > 1"},
		{[]string{"-src", "127.0.0.1,nope"}, `"nope" is not an IP address`},
		{[]string{"-keyspace", "0"}, "-keyspace 0"},
		{[]string{"-value-size", "-1"}, "-value-size -1"},
		{[]string{"-proto", "quic"}, `unsupported protocol "quic" (supported: resp, http, frame)`},
		{[]string{"-rate", "100", "-n", "2", "-c", "5"}, "-n 2 is smaller than -c 5"},
		{[]string{"extra"}, `unexpected argument "extra"`},
	} {
		var stderr bytes.Buffer
		code, err := mainErr(tc.args, &stderr, &stderr)
		if code == 0 || err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: exit %d, err %v; want an error containing %q", tc.args, code, err, tc.want)
		}
	}
}
