package main

import (
	"fmt"
	"path/filepath"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"

	"github.com/shoalkv/shoal/benchmark/internal/chart"
)

// charts draws throughput against pipeline depth (one chart per command and connection
// count) and CPU per request (one grouped bar chart per command), and returns the file
// names written into dir.
func (r *results) charts(dir string) ([]string, error) {
	var files []string
	ops, conns, pipes := r.axes()
	for _, op := range ops {
		for _, c := range conns {
			name := fmt.Sprintf("throughput_%s_c%d.png", op, c)
			if err := r.throughputChart(filepath.Join(dir, name), op, c, pipes); err != nil {
				return nil, err
			}
			files = append(files, name)
		}
	}
	for _, op := range ops {
		name := fmt.Sprintf("cpu_per_request_%s.png", op)
		if err := r.cpuChart(filepath.Join(dir, name), op); err != nil {
			return nil, err
		}
		files = append(files, name)
	}
	return files, nil
}

// axes lists the distinct commands, connection counts and pipeline depths, in run order.
func (r *results) axes() (ops []string, conns, pipes []int) {
	seen := map[string]bool{}
	for _, w := range r.Workloads {
		if k := "op" + w.Op; !seen[k] {
			seen[k] = true
			ops = append(ops, w.Op)
		}
		if k := "c" + strconv.Itoa(w.Conns); !seen[k] {
			seen[k] = true
			conns = append(conns, w.Conns)
		}
		if k := "p" + strconv.Itoa(w.Pipeline); !seen[k] {
			seen[k] = true
			pipes = append(pipes, w.Pipeline)
		}
	}
	return
}

func (r *results) throughputChart(file, op string, conns int, pipes []int) error {
	p := plot.New()
	p.Title.Text = fmt.Sprintf("%s throughput, %d connections (median of %d)", op, conns, r.Rounds)
	p.X.Label.Text = "pipeline depth"
	p.Y.Label.Text = "requests/s"
	p.X.Scale = plot.LogScale{}
	p.X.Tick.Marker = chart.IntTicks(pipes)
	p.Y.Min = 0
	p.Legend.Top = true
	p.Legend.Left = true
	for i, s := range r.Servers {
		var pts plotter.XYs
		for _, d := range pipes {
			w := workload{op, conns, d}
			pts = append(pts, plotter.XY{X: float64(d), Y: r.summarize(s, "closed", &w).Throughput})
		}
		line, err := chart.AddSeries(p, i, s, pts)
		if err != nil {
			return err
		}
		line.Width = vg.Points(1.5)
	}
	p.Add(plotter.NewGrid())
	return p.Save(6*vg.Inch, 4*vg.Inch, file)
}

// cpuChart draws CPU per request against pipeline depth on log axes: one colour per
// server, solid for the first connection count, dashed for the next.
func (r *results) cpuChart(file, op string) error {
	_, conns, pipes := r.axes()
	p := plot.New()
	p.Title.Text = fmt.Sprintf("%s: server CPU per request (median of %d), lower is better", op, r.Rounds)
	p.X.Label.Text = "pipeline depth"
	p.Y.Label.Text = "µs CPU / request"
	p.X.Scale, p.Y.Scale = plot.LogScale{}, plot.LogScale{}
	p.X.Tick.Marker = chart.IntTicks(pipes)
	p.Legend.Top = true
	for i, s := range r.Servers {
		for j, c := range conns {
			var pts plotter.XYs
			for _, d := range pipes {
				w := workload{op, c, d}
				if v := r.summarize(s, "closed", &w).CPUPerReq; v > 0 {
					pts = append(pts, plotter.XY{X: float64(d), Y: v})
				}
			}
			if len(pts) == 0 {
				continue
			}
			line, err := chart.AddSeries(p, i, fmt.Sprintf("%s c=%d", s, c), pts)
			if err != nil {
				return err
			}
			line.Width = vg.Points(1.5)
			line.Dashes = plotutil.Dashes(j)
		}
	}
	p.Y.Tick.Marker = niceLogTicks(p.Y.Min, p.Y.Max)
	p.Add(plotter.NewGrid())
	return p.Save(6*vg.Inch, 4.5*vg.Inch, file)
}

// niceLogTicks labels 1-2-5 steps between lo and hi (plot.LogTicks labels only powers of
// ten, often none in a CPU-per-request range).
func niceLogTicks(lo, hi float64) plot.ConstantTicks {
	var ticks plot.ConstantTicks
	for decade := 0.01; decade <= 1e4; decade *= 10 {
		for _, m := range []float64{1, 2, 5} {
			if v := m * decade; v >= lo && v <= hi {
				ticks = append(ticks, plot.Tick{Value: v, Label: strconv.FormatFloat(v, 'g', -1, 64)})
			}
		}
	}
	return ticks
}
