package soak

import (
	"fmt"
	"image/color"
	"os"
	"path/filepath"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"
)

var (
	blue = color.RGBA{R: 0x1f, G: 0x77, B: 0xb4, A: 0xff}
	grey = color.RGBA{R: 0x88, G: 0x88, B: 0x88, A: 0xff}
	red  = color.RGBA{R: 0xd6, G: 0x27, B: 0x28, A: 0xff}
)

// panel is one small plot: curves over the minutes of the churn, and the
// trend fitted to the first curve's second half when one was.
type panel struct {
	title  string
	curves []curve
	trend  *Trend
}

type curve struct {
	name  string
	value func(Sample) float64
	color color.Color
}

// Plot draws the samples to path: SVG when it ends in .svg, else PNG. The
// dashed red line on a panel is the trend the verdict fitted.
func Plot(path, title string, samples []Sample, trends []Trend) error {
	trend := func(name string) *Trend {
		for i := range trends {
			if trends[i].Series == name && trends[i].Points >= minPoints {
				return &trends[i]
			}
		}
		return nil
	}
	panels := []panel{
		{"resident memory (MiB)", []curve{{"RSS", func(s Sample) float64 { return s.RSSMiB }, blue}, {"Go heap in use", func(s Sample) float64 { return s.HeapMiB }, grey}}, trend("RSS (MiB)")},
		{"goroutines", []curve{{"", func(s Sample) float64 { return s.Goroutines }, blue}}, trend("goroutines")},
		{"open file descriptors", []curve{{"", func(s Sample) float64 { return s.OpenFDs }, blue}}, trend("open fds")},
		{"API requests per second", []curve{{"", func(s Sample) float64 { return s.APIRate }, blue}}, trend("API requests/s")},
		{"reconciles and changes per sample", []curve{{"reconciles", func(s Sample) float64 { return s.Reconciles }, blue}, {"changes made", func(s Sample) float64 { return float64(s.Changes) }, grey}}, nil},
		{"custom resources", []curve{{"Ready", func(s Sample) float64 { return float64(s.Ready) }, blue}, {"live", func(s Sample) float64 { return float64(s.Live) }, grey}}, nil},
	}
	const cols = 3
	rows := make([][]*plot.Plot, (len(panels)+cols-1)/cols)
	for i, pn := range panels {
		p, err := pn.plot(samples)
		if err != nil {
			return err
		}
		rows[i/cols] = append(rows[i/cols], p)
	}
	w, h := vg.Points(1200), vg.Points(720)
	var c vg.CanvasSizer
	svg := strings.HasSuffix(strings.ToLower(filepath.Ext(path)), "svg")
	var img *vgimg.Canvas
	var sv *vgsvg.Canvas
	if svg {
		sv = vgsvg.New(w, h)
		c = sv
	} else {
		img = vgimg.New(w, h)
		c = img
	}
	dc := draw.New(c)
	top := vg.Points(30)
	st := plot.New().Title.TextStyle
	st.Font.Size, st.XAlign, st.YAlign = vg.Points(14), draw.XCenter, draw.YCenter
	dc.FillText(st, vg.Point{X: w / 2, Y: h - top/2}, title)
	dc.Max.Y -= top
	tiles := draw.Tiles{Rows: len(rows), Cols: cols, PadX: vg.Points(20), PadY: vg.Points(20), PadTop: vg.Points(5), PadBottom: vg.Points(10), PadLeft: vg.Points(10), PadRight: vg.Points(10)}
	canvases := plot.Align(rows, tiles, dc)
	for i, row := range rows {
		for j, p := range row {
			p.Draw(canvases[i][j])
		}
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if svg {
		_, err = sv.WriteTo(f)
	} else {
		_, err = (vgimg.PngCanvas{Canvas: img}).WriteTo(f)
	}
	if err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func (pn panel) plot(samples []Sample) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = pn.title
	p.X.Label.Text = "minutes of churn"
	p.Y.Min = 0
	p.Legend.Top, p.Legend.Left = false, true
	p.Add(plotter.NewGrid())
	for _, c := range pn.curves {
		xys := make(plotter.XYs, len(samples))
		for i, s := range samples {
			xys[i] = plotter.XY{X: s.Elapsed.Minutes(), Y: c.value(s)}
		}
		if len(xys) == 0 {
			continue
		}
		l, err := plotter.NewLine(xys)
		if err != nil {
			return nil, err
		}
		l.Color, l.Width = c.color, vg.Points(1.5)
		p.Add(l)
		if c.name != "" {
			p.Legend.Add(c.name, l)
		}
	}
	if t := pn.trend; t != nil && len(samples) > 0 {
		x0, x1 := t.From.Hours(), samples[len(samples)-1].Elapsed.Hours()
		xm := (x0 + x1) / 2
		at := func(x float64) float64 { return t.Mean + t.SlopePerHour*(x-xm) }
		l, err := plotter.NewLine(plotter.XYs{{X: x0 * 60, Y: at(x0)}, {X: x1 * 60, Y: at(x1)}})
		if err != nil {
			return nil, err
		}
		l.Color, l.Width, l.Dashes = red, vg.Points(1.5), []vg.Length{vg.Points(5), vg.Points(3)}
		p.Add(l)
		p.Legend.Add(fmt.Sprintf("fit: %+.1f%%/h", 100*t.Relative), l)
	}
	return p, nil
}
