package main

import (
	"fmt"
	"os"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// writeChart draws connections over time (top) and each second's p50 and p99 latency
// during the load (bottom), one colour per server, into a PNG.
func writeChart(file string, r *Report) error {
	runs := []*Report{r}
	if r.Peer != nil {
		runs = append(runs, r.Peer)
	}
	conns := plot.New()
	conns.Title.Text = fmt.Sprintf("Stress rig: connections open (target %d)", r.Target)
	conns.X.Label.Text = "seconds since the clients started"
	conns.Y.Label.Text = "connections"
	conns.Legend.Top, conns.Legend.Left = true, true
	lat := plot.New()
	lat.Title.Text = "Latency per second of load (open loop, from the scheduled send time)"
	lat.X.Label.Text = "seconds since the load started"
	lat.Y.Label.Text = "µs"
	lat.Y.Scale = plot.LogScale{}
	lat.Y.Tick.Marker = plot.LogTicks{Prec: -1}
	lat.Legend.Top = true
	for i, x := range runs {
		var c, p50, p99 plotter.XYs
		loadStart := -1.0
		for _, pt := range x.Timeline {
			c = append(c, plotter.XY{X: pt.T, Y: float64(pt.Connected)})
			if pt.Phase == "ready" {
				loadStart = pt.T
			}
			if pt.Phase == "load" && loadStart >= 0 && pt.P99Us > 0 {
				p50 = append(p50, plotter.XY{X: pt.T - loadStart, Y: pt.P50Us})
				p99 = append(p99, plotter.XY{X: pt.T - loadStart, Y: pt.P99Us})
			}
		}
		name := serverName(x.Server)
		if err := addLine(conns, c, i, 0, name); err != nil {
			return err
		}
		if len(p99) > 0 {
			if err := addLine(lat, p50, i, 1, name+" p50"); err != nil {
				return err
			}
			if err := addLine(lat, p99, i, 0, name+" p99"); err != nil {
				return err
			}
		}
	}
	conns.Add(plotter.NewGrid())
	lat.Add(plotter.NewGrid())

	img := vgimg.New(8*vg.Inch, 8*vg.Inch)
	dc := draw.New(img)
	tiles := draw.Tiles{Rows: 2, Cols: 1, PadTop: vg.Millimeter * 3, PadBottom: vg.Millimeter * 3,
		PadLeft: vg.Millimeter * 3, PadRight: vg.Millimeter * 3, PadY: vg.Millimeter * 8}
	canvases := plot.Align([][]*plot.Plot{{conns}, {lat}}, tiles, dc)
	conns.Draw(canvases[0][0])
	lat.Draw(canvases[1][0])
	f, err := os.Create(file)
	if err != nil {
		return err
	}
	if _, err := (vgimg.PngCanvas{Canvas: img}).WriteTo(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func addLine(p *plot.Plot, pts plotter.XYs, color, dash int, name string) error {
	if len(pts) == 0 {
		return nil
	}
	l, err := plotter.NewLine(pts)
	if err != nil {
		return err
	}
	l.Color = plotutil.Color(color)
	l.Dashes = plotutil.Dashes(dash)
	l.Width = vg.Points(1.5)
	p.Add(l)
	p.Legend.Add(name, l)
	return nil
}
