// Command soakplot reads the output of `load -mode soak` (its SOAK lines)
// and draws it as one SVG of two panels sharing the time axis: the
// servers' memory (resident, and heap in use after a collection) and the
// churned calls' p50 and p99. scripts/soak.sh runs it.
//
//	soakplot -in soak.out -out soak.svg -title "1 node, 100,000 idle sessions"
package main

import (
	"bufio"
	"flag"
	"fmt"
	"image/color"
	"os"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgsvg"
)

// sample is one SOAK line.
type sample struct {
	t, rss, heap, p50, p99 float64
}

func main() {
	in := flag.String("in", "", "the load tool's output")
	out := flag.String("out", "soak.svg", "the SVG to write")
	title := flag.String("title", "soak", "the figure's title")
	flag.Parse()
	samples, err := read(*in)
	if err == nil && len(samples) == 0 {
		err = fmt.Errorf("%s has no SOAK line", *in)
	}
	if err == nil {
		err = draw2(samples, *title, *out)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "soakplot:", err)
		os.Exit(1)
	}
}

// read returns the SOAK lines of file.
func read(file string) ([]sample, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []sample
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line, ok := strings.CutPrefix(sc.Text(), "SOAK ")
		if !ok {
			continue
		}
		kv := map[string]float64{}
		for _, field := range strings.Fields(line) {
			k, v, _ := strings.Cut(field, "=")
			kv[k], _ = strconv.ParseFloat(v, 64)
		}
		out = append(out, sample{t: kv["t_s"] / 60, rss: kv["rss_bytes"] / (1 << 20), heap: kv["heap_bytes"] / (1 << 20), p50: kv["p50_ms"], p99: kv["p99_ms"]})
	}
	return out, sc.Err()
}

// draw2 writes the two panels to file.
func draw2(samples []sample, title, file string) error {
	mem := plot.New()
	mem.Title.Text = title
	mem.Y.Label.Text = "MiB"
	mem.Y.Min = 0
	if err := lines(mem, samples, "resident (RSS)", func(s sample) float64 { return s.rss }, 0,
		"heap in use after GC", func(s sample) float64 { return s.heap }, 1); err != nil {
		return err
	}
	lat := plot.New()
	lat.X.Label.Text = "minutes"
	lat.Y.Label.Text = "ms per call (churned sessions)"
	lat.Y.Min = 0
	if err := lines(lat, samples, "p99", func(s sample) float64 { return s.p99 }, 0,
		"p50", func(s sample) float64 { return s.p50 }, 1); err != nil {
		return err
	}
	const w, h = 18 * vg.Centimeter, 16 * vg.Centimeter
	c := vgsvg.New(w, h)
	dc := draw.New(c)
	tiles := draw.Tiles{Rows: 2, Cols: 1, PadTop: vg.Millimeter, PadBottom: vg.Millimeter, PadX: vg.Millimeter, PadY: 2 * vg.Millimeter}
	canvases := plot.Align([][]*plot.Plot{{mem}, {lat}}, tiles, dc)
	mem.Draw(canvases[0][0])
	lat.Draw(canvases[1][0])
	f, err := os.Create(file)
	if err != nil {
		return err
	}
	if _, err := c.WriteTo(f); err != nil {
		_ = f.Close()
		return err
	}
	return f.Close()
}

// lines adds two named series of samples to p.
func lines(p *plot.Plot, samples []sample, name1 string, y1 func(sample) float64, c1 int, name2 string, y2 func(sample) float64, c2 int) error {
	palette := []color.Color{color.RGBA{R: 200, G: 40, B: 40, A: 255}, color.RGBA{R: 40, G: 90, B: 200, A: 255}}
	for _, s := range []struct {
		name string
		y    func(sample) float64
		c    int
	}{{name1, y1, c1}, {name2, y2, c2}} {
		pts := make(plotter.XYs, len(samples))
		for i, smp := range samples {
			pts[i].X, pts[i].Y = smp.t, s.y(smp)
		}
		l, err := plotter.NewLine(pts)
		if err != nil {
			return err
		}
		l.Color = palette[s.c]
		l.Width = vg.Points(1.2)
		p.Add(l)
		p.Legend.Add(s.name, l)
	}
	p.Legend.Top = true
	p.Add(plotter.NewGrid())
	return nil
}
