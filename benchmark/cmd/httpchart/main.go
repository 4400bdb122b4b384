// Command httpchart draws the server CPU per request of the runs that
// benchmark/scripts/http-vs-fasthttp.sh printed (RUNS_OUT=file), on
// log axes, one line per server and client (dashed: wrk), each point the median of its
// runs at a pipeline depth.
//
//	RUNS_OUT=/tmp/runs benchmark/scripts/http-vs-fasthttp.sh 3 3
//	go run ./benchmark/cmd/httpchart -in /tmp/runs -out benchmark/results/http_fronts_cpu.png
package main

import (
	"bufio"
	"flag"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"github.com/shoalkv/shoal/benchmark/internal/chart"
	"github.com/shoalkv/shoal/benchmark/internal/stats"
)

func main() {
	in := flag.String("in", "", "runs file: lines of `name P=depth requests/s cpu-µs/request errors=N`")
	out := flag.String("out", "http_fronts_cpu.png", "PNG to write")
	flag.Parse()
	if err := draw(*in, *out); err != nil {
		fmt.Fprintln(os.Stderr, "httpchart:", err)
		os.Exit(1)
	}
}

// runs reads the file into CPU samples by server and depth, keeping first-seen order.
func runs(file string) (cpu map[string]map[string][]float64, names, depths []string, err error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, nil, nil, err
	}
	defer f.Close()
	cpu = map[string]map[string][]float64{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fs := strings.Fields(sc.Text())
		if len(fs) != 5 || !strings.HasPrefix(fs[1], "P=") {
			return nil, nil, nil, fmt.Errorf("%s: unexpected line %q", file, sc.Text())
		}
		v, err := strconv.ParseFloat(fs[3], 64)
		if err != nil {
			return nil, nil, nil, fmt.Errorf("%s: CPU %q: %v", file, fs[3], err)
		}
		name, depth := fs[0], strings.TrimPrefix(fs[1], "P=")
		if cpu[name] == nil {
			cpu[name] = map[string][]float64{}
			names = append(names, name)
		}
		if !contains(depths, depth) {
			depths = append(depths, depth)
		}
		cpu[name][depth] = append(cpu[name][depth], v)
	}
	sort.Strings(names)
	return cpu, names, depths, sc.Err()
}

func draw(in, out string) error {
	cpu, names, depths, err := runs(in)
	if err != nil {
		return err
	}
	p := plot.New()
	p.Title.Text = "server CPU per GET (median), 50 connections"
	p.X.Label.Text = "pipeline depth"
	p.Y.Label.Text = "CPU µs per request"
	p.X.Scale, p.Y.Scale = plot.LogScale{}, plot.LogScale{}
	p.Y.Tick.Marker = plot.LogTicks{Prec: -1}
	var ticks plot.ConstantTicks
	for _, d := range depths {
		v, err := strconv.ParseFloat(d, 64)
		if err != nil || v <= 0 {
			return fmt.Errorf("%s: pipeline depth %q", in, d)
		}
		ticks = append(ticks, plot.Tick{Value: v, Label: d})
	}
	p.X.Tick.Marker = ticks
	p.Legend.Top = true
	for i, name := range names {
		var pts plotter.XYs
		for j, d := range depths {
			if m := stats.Median(cpu[name][d]); m > 0 {
				pts = append(pts, plotter.XY{X: ticks[j].Value, Y: m})
			}
		}
		if len(pts) == 0 {
			continue
		}
		line, err := chart.AddSeries(p, i, name, pts)
		if err != nil {
			return err
		}
		if strings.HasPrefix(name, "wrk:") {
			line.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
		}
	}
	return p.Save(7*vg.Inch, 4.5*vg.Inch, out)
}

func contains(v []string, s string) bool {
	for _, x := range v {
		if x == s {
			return true
		}
	}
	return false
}
