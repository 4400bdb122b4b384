package chart

import (
	"testing"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
)

func TestIntTicksLabelEachValue(t *testing.T) {
	ticks := IntTicks([]int{1, 16, 256})
	if len(ticks) != 3 || ticks[1].Value != 16 || ticks[1].Label != "16" || ticks[2].Label != "256" {
		t.Errorf("IntTicks = %+v", ticks)
	}
}

func TestAddSeriesColoursByIndex(t *testing.T) {
	p := plot.New()
	line, err := AddSeries(p, 2, "shoal", plotter.XYs{{X: 1, Y: 2}, {X: 2, Y: 3}})
	if err != nil {
		t.Fatal(err)
	}
	if line.Color != plotutil.Color(2) {
		t.Errorf("line colour %v, want palette colour 2", line.Color)
	}
}
