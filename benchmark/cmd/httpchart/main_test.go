package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/shoalkv/shoal/benchmark/internal/stats"
)

func TestDrawReadsRunsAndWritesPNG(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "runs")
	os.WriteFile(in, []byte("shoal-http P=1 100 10.0 errors=0\nfasthttp P=1 90 14.0 errors=0\n"+
		"shoal-http P=1 100 12.0 errors=0\nshoal-http P=16 900 1.0 errors=0\nfasthttp P=16 800 2.0 errors=0\n"), 0o644)
	cpu, names, depths, err := runs(in)
	if err != nil {
		t.Fatal(err)
	}
	if len(names) != 2 || len(depths) != 2 || stats.Median(cpu["shoal-http"]["1"]) != 11 {
		t.Fatalf("names %v depths %v shoal-http P=1 median %v", names, depths, stats.Median(cpu["shoal-http"]["1"]))
	}
	out := filepath.Join(dir, "chart.png")
	if err := draw(in, out); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(out)
	if err != nil || len(b) < 8 || string(b[1:4]) != "PNG" {
		t.Fatalf("no PNG written: %v", err)
	}
	os.WriteFile(in, []byte("garbage\n"), 0o644)
	if err := draw(in, out); err == nil {
		t.Fatal("a malformed runs file was accepted")
	}
}
