// Package chart holds what the benchmark commands' gonum plots have in
// common: pipeline depths or goroutine counts marked on a log axis, and one
// line with points per series, coloured and shaped by its index.
package chart

import (
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
)

// IntTicks marks each of xs on an axis with its value, for axes of few
// values such as pipeline depths on a log scale.
func IntTicks(xs []int) plot.ConstantTicks {
	ticks := make(plot.ConstantTicks, 0, len(xs))
	for _, x := range xs {
		ticks = append(ticks, plot.Tick{Value: float64(x), Label: strconv.Itoa(x)})
	}
	return ticks
}

// AddSeries draws pts on p as a line with points in the i-th colour and
// shape of plotutil's palettes, named in the legend. It returns the line, for
// a caller that dashes or widens it.
func AddSeries(p *plot.Plot, i int, name string, pts plotter.XYs) (*plotter.Line, error) {
	line, points, err := plotter.NewLinePoints(pts)
	if err != nil {
		return nil, err
	}
	line.Color, points.Color = plotutil.Color(i), plotutil.Color(i)
	points.Shape = plotutil.Shape(i)
	p.Add(line, points)
	p.Legend.Add(name, line, points)
	return line, nil
}
