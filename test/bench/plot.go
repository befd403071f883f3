package bench

import (
	"fmt"
	"image/color"
	"os"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// palette colours subjects in order.
var palette = []color.Color{
	color.RGBA{R: 0x1f, G: 0x77, B: 0xb4, A: 0xff},
	color.RGBA{R: 0x55, G: 0x55, B: 0x55, A: 0xff},
	color.RGBA{R: 0xd6, G: 0x27, B: 0x28, A: 0xff},
	color.RGBA{R: 0x2c, G: 0xa0, B: 0x2c, A: 0xff},
	color.RGBA{R: 0x94, G: 0x67, B: 0xbd, A: 0xff},
}

// Plot draws the convergence curves to a PNG: for install and upgrade, how
// many releases were deployed (dashed) and Ready (solid) over the seconds
// since the phase began, one colour per subject (a curve per run).
func (res *Result) Plot(path string) error {
	var row []*plot.Plot
	for _, phase := range []string{PhaseInstall, PhaseUpgrade} {
		p := plot.New()
		p.Title.Text = fmt.Sprintf("%s of %d releases", phase, res.N)
		p.X.Label.Text = "seconds since the phase began"
		p.Y.Label.Text = "releases"
		p.Y.Min, p.Y.Max = 0, float64(res.N)
		p.Legend.Top, p.Legend.Left = false, false
		p.Add(plotter.NewGrid())
		for i, name := range res.subjectNames() {
			for _, m := range []string{MilestoneDeployed, MilestoneReady} {
				legend := true
				for _, s := range res.runsOf(name) {
					ms := s.phase(phase).milestone(m)
					if ms == nil || len(ms.Times) == 0 {
						continue
					}
					l, err := plotter.NewLine(curve(ms.Times))
					if err != nil {
						return err
					}
					l.Color = palette[i%len(palette)]
					l.Width = vg.Points(1.5)
					if m == MilestoneDeployed {
						l.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
					}
					p.Add(l)
					if legend { // one entry per subject, whatever the runs
						p.Legend.Add(name+" "+m, l)
						legend = false
					}
				}
			}
		}
		row = append(row, p)
	}
	const w, h = 1400, 520
	img := vgimg.New(vg.Points(w), vg.Points(h))
	dc := draw.New(img)
	tiles := draw.Tiles{Rows: 1, Cols: len(row), PadX: vg.Points(20), PadY: vg.Points(10), PadTop: vg.Points(10), PadBottom: vg.Points(10), PadLeft: vg.Points(10), PadRight: vg.Points(10)}
	canvases := plot.Align([][]*plot.Plot{row}, tiles, dc)
	for i, p := range row {
		p.Draw(canvases[0][i])
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := (vgimg.PngCanvas{Canvas: img}).WriteTo(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// curve is a count-over-time step curve from sorted times, starting at 0.
func curve(times []float64) plotter.XYs {
	xys := make(plotter.XYs, 0, 2*len(times)+1)
	xys = append(xys, plotter.XY{X: 0, Y: 0})
	for i, t := range times {
		xys = append(xys, plotter.XY{X: t, Y: float64(i)}, plotter.XY{X: t, Y: float64(i + 1)})
	}
	return xys
}
