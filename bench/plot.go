package bench

import (
	"fmt"
	"path/filepath"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
)

// PlotSweep draws the capacity-vs-horizon figures into dir, each as SVG and
// PNG: rate_vs_params (the memory file's rate and the world model's own
// R(P); R(P) alone when the curve has no file rates), total_vs_params
// (S(P, N) for a few horizons, on the rate StoredRate takes) and
// optimal_params_vs_horizon (P*(N)). It returns the files written.
func PlotSweep(dir string, pts []CurvePoint, rows []HorizonRow) ([]string, error) {
	var files []string
	save := func(p *plot.Plot, name string) error {
		for _, ext := range []string{".svg", ".png"} {
			path := filepath.Join(dir, name+ext)
			if err := p.Save(6*vg.Inch, 4*vg.Inch, path); err != nil {
				return fmt.Errorf("bench: %s: %w", path, err)
			}
			files = append(files, path)
		}
		return nil
	}
	// Capacity axes are logarithmic, ticked at the presets themselves.
	var capTicks []plot.Tick
	for _, c := range pts {
		capTicks = append(capTicks, plot.Tick{Value: c.Params, Label: fmt.Sprintf("%s %.3gM", c.Name, c.Params/1e6)})
	}
	logX := func(p *plot.Plot) {
		p.X.Scale = plot.LogScale{}
		p.X.Tick.Marker = plot.ConstantTicks(capTicks)
	}

	fileRates := RateRule(pts) == "file"
	rateOf := func(f func(CurvePoint) float64) plotter.XYs {
		xy := make(plotter.XYs, len(pts))
		for i, c := range pts {
			xy[i] = plotter.XY{X: c.Params, Y: f(c)}
		}
		return xy
	}
	model := func(c CurvePoint) float64 { return c.Rate }
	file := func(c CurvePoint) float64 { return c.FileRate }

	// The memory file's rate, the main curve, and the world model's own.
	p := plot.New()
	p.Title.Text = "Episodic rate vs world-model capacity"
	p.X.Label.Text = "parameters P"
	p.Y.Label.Text = "bits per observation"
	logX(p)
	p.Legend.Top = true
	lines := []any{"world model alone, R(P)", rateOf(model)}
	if fileRates {
		lines = append([]any{"memory file (encode --lambda 0, whole file)", rateOf(file)}, lines...)
	}
	if err := plotutil.AddLinePoints(p, lines...); err != nil {
		return nil, err
	}
	// From zero, with room above the curves for the legend.
	p.Y.Min, p.Y.Max = 0, 1.3*p.Y.Max
	if err := save(p, "rate_vs_params"); err != nil {
		return nil, err
	}

	// S(P, N) for every third horizon.
	p = plot.New()
	p.Title.Text = "Total storage vs capacity, per horizon N"
	p.X.Label.Text = "parameters P"
	p.Y.Label.Text = "S(P, N) = B(P)/N + R(P), bits per observation"
	if fileRates {
		p.Y.Label.Text = "S(P, N) = B(P)/N + memory file rate, bits/obs"
	} else {
		p.Title.Text += " (world model's rate alone)"
	}
	logX(p)
	p.Y.Scale = plot.LogScale{}
	p.Y.Tick.Marker = plot.LogTicks{Prec: -1}
	p.Legend.Top = true
	lines = nil
	for i := 0; i < len(rows); i += 3 {
		r := rows[i]
		xy := make(plotter.XYs, len(pts))
		for k, c := range pts {
			xy[k] = plotter.XY{X: c.Params, Y: r.Total[k]}
		}
		lines = append(lines, fmt.Sprintf("N = %.0e", r.N), xy)
	}
	if err := plotutil.AddLinePoints(p, lines...); err != nil {
		return nil, err
	}
	if err := save(p, "total_vs_params"); err != nil {
		return nil, err
	}

	// P*(N).
	p = plot.New()
	p.Title.Text = "Best capacity vs horizon"
	p.X.Label.Text = "horizon N, observations"
	p.Y.Label.Text = "P*(N), parameters"
	p.X.Scale = plot.LogScale{}
	p.X.Tick.Marker = plot.LogTicks{Prec: -1}
	p.Y.Scale = plot.LogScale{}
	p.Y.Tick.Marker = plot.ConstantTicks(capTicks)
	params := map[string]float64{}
	for _, c := range pts {
		params[c.Name] = c.Params
	}
	if !fileRates {
		p.Title.Text += " (world model's rate alone)"
	}
	xy := make(plotter.XYs, len(rows))
	for i, r := range rows {
		xy[i] = plotter.XY{X: r.N, Y: params[r.Best]}
	}
	if err := plotutil.AddLinePoints(p, "P*(N)", xy); err != nil {
		return nil, err
	}
	if err := save(p, "optimal_params_vs_horizon"); err != nil {
		return nil, err
	}
	return files, nil
}
