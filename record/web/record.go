package web

import (
	"context"
	"errors"
	"fmt"
	"image"
	"time"

	"github.com/memowm/memowm/recording"
)

// Config is what Record records.
type Config struct {
	Site     string        // a folder of HTML or an http(s) URL (see OpenSite)
	Steps    int           // actions to take; the recording has Steps+1 observations
	Seed     uint64        // the policy's seed
	Width    int           // viewport width in pixels; default 640
	Height   int           // viewport height in pixels; default 400
	Timeout  time.Duration // the longest one action, load, screenshot or read may take; default 10 s
	Chromium string        // Chromium's path; default: found by FindChromium

	// Progress, when not nil, is called after each observation with the
	// number of steps done (0 for the first observation).
	Progress func(done, total int)
	// Log, when not nil, gets one line per recovery.
	Log func(format string, args ...any)
}

// Defaults of Config.
const (
	DefaultWidth   = 640
	DefaultHeight  = 400
	DefaultTimeout = 10 * time.Second
)

func (c *Config) setDefaults() {
	if c.Width == 0 {
		c.Width = DefaultWidth
	}
	if c.Height == 0 {
		c.Height = DefaultHeight
	}
	if c.Timeout == 0 {
		c.Timeout = DefaultTimeout
	}
}

// Validate checks the configuration (after defaults).
func (c Config) Validate() error {
	c.setDefaults()
	switch {
	case c.Site == "":
		return errors.New("record web: no site")
	case c.Steps < 1:
		return fmt.Errorf("record web: steps %d: want at least 1", c.Steps)
	case c.Width < 64 || c.Height < 64 || c.Width > 4096 || c.Height > 4096:
		return fmt.Errorf("record web: viewport %dx%d: want 64..4096 pixels a side", c.Width, c.Height)
	case c.Timeout < 100*time.Millisecond:
		return fmt.Errorf("record web: timeout %v: want at least 100ms", c.Timeout)
	}
	return nil
}

// Sink takes the recording as it is made: observation 0 first, then for
// each step its action, the observation it led to, and the step's timing.
// A *recording.Writer is one.
type Sink interface {
	AddPNG(png []byte, facts map[string]any) error
	AddAction(a recording.Action) error
	AddTiming(t map[string]any) error
}

// Result is what a recording was like.
type Result struct {
	Steps      int            // actions recorded
	Start      string         // the start page's URL
	Timings    []Timing       // per step, Steps of them
	Change     ChangeStats    // screen changes over the steps
	Kinds      map[Kind]int   // actions by kind
	Pages      int            // distinct page paths observed
	Recoveries int            // failed actions replaced by a return to the start page
	Errors     map[string]int // what failed, by the failing stage
}

// Record explores cfg.Site in headless Chromium with the seeded policy and
// hands every observation and action to sink. When an action fails or
// hangs, the browser goes back to the start page and the step is recorded
// as that goto; a failure of the return itself ends the recording with an
// error. Canceling ctx ends it too. Either way the browser is closed and
// its profile removed before Record returns.
func Record(ctx context.Context, cfg Config, sink Sink) (*Result, error) {
	cfg.setDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	// The site is what the user typed: its errors come before the search
	// for the browser.
	site, err := OpenSite(cfg.Site)
	if err != nil {
		return nil, err
	}
	defer site.Close()
	if _, err := FindChromium(cfg.Chromium); err != nil {
		return nil, err
	}

	b, err := StartBrowser(ctx, BrowserOptions{Chromium: cfg.Chromium, Width: cfg.Width, Height: cfg.Height, Timeout: cfg.Timeout})
	if err != nil {
		return nil, err
	}
	res, err := record(ctx, cfg, site, b, sink)
	if cerr := b.Close(); err == nil {
		err = cerr
	}
	if ctx.Err() != nil {
		return nil, fmt.Errorf("record web: %w", context.Cause(ctx))
	}
	return res, err
}

func record(ctx context.Context, cfg Config, site *Site, b *Browser, sink Sink) (*Result, error) {
	res := &Result{Start: site.Start(), Kinds: map[Kind]int{}, Errors: map[string]int{}}
	if err := b.Navigate(site.Start()); err != nil {
		return nil, fmt.Errorf("%w (the start page %s)", err, site.Start())
	}
	if err := b.MarkHistory(); err != nil {
		return nil, err
	}
	pol := NewPolicy(cfg.Seed, site.StartPath(), site.Followable)
	pages := map[string]bool{}

	// observe takes the screenshot and reads the page.
	observe := func(tm *Timing) (*Page, []byte, map[string]any, error) {
		t0 := time.Now()
		shot, err := b.Screenshot()
		tm.Screenshot = time.Since(t0)
		if err != nil {
			return nil, nil, nil, err
		}
		t1 := time.Now()
		p, err := b.Observe()
		tm.Facts = time.Since(t1)
		if err != nil {
			return nil, nil, nil, err
		}
		p.NotFound = !site.Exists(p.URL)
		pages[p.Path] = true
		return p, shot, p.Facts(), nil
	}

	var t0 Timing
	p, shot, facts, err := observe(&t0)
	if err != nil {
		return nil, err
	}
	prev, err := checkShot(shot, cfg.Width, cfg.Height)
	if err != nil {
		return nil, err
	}
	if err := sink.AddPNG(shot, facts); err != nil {
		return nil, err
	}
	if cfg.Progress != nil {
		cfg.Progress(0, cfg.Steps)
	}

	for step := 1; step <= cfg.Steps; step++ {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		canBack, err := b.CanGoBack()
		if err != nil {
			return nil, err
		}
		a := pol.Next(p, canBack)
		var tm Timing
		tm.Act, tm.Settle, err = b.Act(a, site)
		var np *Page
		if err == nil {
			np, shot, facts, err = observe(&tm)
		}
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			// Recover: back to the start page, recorded as a goto.
			res.Recoveries++
			res.Errors[string(a.Kind)]++
			if cfg.Log != nil {
				cfg.Log("step %d: %s failed (%v); back to the start page", step, a.Kind, err)
			}
			t1 := time.Now()
			if rerr := b.Recover(site.Start()); rerr != nil {
				return nil, fmt.Errorf("record web: step %d: %v; going back to the start page failed: %w", step, err, rerr)
			}
			a = Action{Kind: Goto, Text: site.StartPath()}
			tm = Timing{Settle: time.Since(t1)}
			if np, shot, facts, err = observe(&tm); err != nil {
				return nil, fmt.Errorf("record web: step %d: after going back to the start page: %w", step, err)
			}
		}
		img, err := checkShot(shot, cfg.Width, cfg.Height)
		if err != nil {
			return nil, err
		}
		change := Diff(prev, img)
		res.Change.Add(change)
		prev, p = img, np

		if err := sink.AddAction(a.Record(cfg.Width, cfg.Height)); err != nil {
			return nil, err
		}
		if err := sink.AddPNG(shot, facts); err != nil {
			return nil, err
		}
		tj := tm.JSON(step)
		tj["kind"] = string(a.Kind)
		tj["changed_pixels"] = round4(change.Pixels)
		tj["changed_blocks"] = round4(change.Blocks)
		if err := sink.AddTiming(tj); err != nil {
			return nil, err
		}
		res.Steps++
		res.Kinds[a.Kind]++
		res.Timings = append(res.Timings, tm)
		if cfg.Progress != nil {
			cfg.Progress(step, cfg.Steps)
		}
	}
	res.Pages = len(pages)
	return res, nil
}

// checkShot decodes a screenshot and checks its size.
func checkShot(shot []byte, w, h int) (*image.RGBA, error) {
	img, err := DecodeRGBA(shot)
	if err != nil {
		return nil, err
	}
	if r := img.Bounds(); r.Dx() != w || r.Dy() != h {
		return nil, fmt.Errorf("record web: screenshot is %dx%d, want the viewport %dx%d", r.Dx(), r.Dy(), w, h)
	}
	return img, nil
}
