package web

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
)

// Flags are Chromium's command-line flags, all of them but the window size
// and --user-data-dir (a fresh temporary folder, removed on Close); chromedp
// adds --remote-debugging-pipe and the first page, about:blank. Without the
// background-networking flags Chromium keeps knocking on a closed network.
var Flags = []string{
	"headless", "no-sandbox", "disable-gpu", "disable-background-networking",
	"disable-component-update", "disable-sync", "no-first-run", "disable-quic",
}

// ErrNoChromium is the error of a machine without Chromium.
var ErrNoChromium = errors.New("record web: chromium not found: apt-get install chromium")

// FindChromium returns the path of Chromium: path itself when it is not
// empty, else "chromium" or "chromium-browser" on $PATH, else
// /usr/bin/chromium. It returns ErrNoChromium when there is none.
func FindChromium(path string) (string, error) {
	if path != "" {
		p, err := exec.LookPath(path)
		if err != nil {
			return "", fmt.Errorf("%w (--chromium %s: %v)", ErrNoChromium, path, err)
		}
		return p, nil
	}
	for _, name := range []string{"chromium", "chromium-browser", "/usr/bin/chromium"} {
		if p, err := exec.LookPath(name); err == nil {
			return p, nil
		}
	}
	return "", ErrNoChromium
}

// Browser is one headless Chromium with one tab and a fixed viewport. It is
// not safe for concurrent use.
type Browser struct {
	tab         context.Context // the tab's chromedp context
	closeTab    context.CancelFunc
	closeAlloc  context.CancelFunc
	profile     string // the temporary --user-data-dir
	width       int
	height      int
	timeout     time.Duration
	mainFrame   cdp.FrameID
	historyBase int64 // the history index of the first page loaded

	mu       sync.Mutex
	starts   int  // main-frame loads started
	stops    int  // main-frame loads stopped
	inDoc    int  // same-document navigations (#fragment, pushState)
	loading  bool // a main-frame load runs
	dialogs  int  // JavaScript dialogs dismissed
	lastLoad time.Time
}

// BrowserOptions configure StartBrowser.
type BrowserOptions struct {
	Chromium string        // Chromium's path (see FindChromium)
	Width    int           // viewport width, CSS pixels (= screenshot pixels)
	Height   int           // viewport height
	Timeout  time.Duration // the longest one action, load or screenshot may take
}

// StartBrowser starts Chromium with Flags and a fresh profile, and sets the
// viewport. ctx bounds the browser's life: when it ends, Chromium is killed.
// Close the browser to end it and remove the profile.
//
// Chromium that exits during its start-up (chromedp: "chrome failed to
// start"; seen on a loaded machine) is started once more, with a fresh
// profile, before that is an error.
func StartBrowser(ctx context.Context, o BrowserOptions) (*Browser, error) {
	exe, err := FindChromium(o.Chromium)
	if err != nil {
		return nil, err
	}
	for try := 1; ; try++ {
		b, err := startBrowser(ctx, o, exe)
		if err == nil || try == startTries || ctx.Err() != nil || !strings.Contains(err.Error(), "chrome failed to start") {
			return b, err
		}
	}
}

// startTries is how many times StartBrowser starts a Chromium that exits
// during its start-up.
const startTries = 2

func startBrowser(ctx context.Context, o BrowserOptions, exe string) (*Browser, error) {
	profile, err := os.MkdirTemp("", "memowm-chromium-")
	if err != nil {
		return nil, fmt.Errorf("record web: browser profile: %w", err)
	}
	opts := []chromedp.ExecAllocatorOption{chromedp.ExecPath(exe), chromedp.WindowSize(o.Width, o.Height), chromedp.UserDataDir(profile)}
	for _, f := range Flags {
		opts = append(opts, chromedp.Flag(f, true))
	}
	allocCtx, closeAlloc := chromedp.NewExecAllocator(ctx, opts...)
	tab, closeTab := chromedp.NewContext(allocCtx)
	b := &Browser{tab: tab, closeTab: closeTab, closeAlloc: closeAlloc, profile: profile, width: o.Width, height: o.Height, timeout: o.Timeout}

	// The first Run starts Chromium and lives as long as tab, so it takes
	// no timeout of its own: a watchdog ends a start that hangs.
	started := make(chan struct{})
	hung := false
	watchdog := time.AfterFunc(max(o.Timeout, 30*time.Second), func() {
		select {
		case <-started:
		default:
			hung = true
			closeAlloc()
		}
	})
	err = chromedp.Do(tab, chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		tree, err := cdp.Call(ctx, t, page.GetFrameTree, cdp.Empty{})
		if err != nil {
			return err
		}
		b.mainFrame = tree.FrameTree.Frame.ID
		_, err = cdp.Call(ctx, t, emulation.SetDeviceMetricsOverride, emulation.SetDeviceMetricsOverrideParams{
			Width: int64(o.Width), Height: int64(o.Height), DeviceScaleFactor: 1,
		})
		return err
	}))
	close(started)
	watchdog.Stop()
	if err == nil {
		_, err = chromedp.CallBrowser(tab, browser.SetDownloadBehavior, browser.SetDownloadBehaviorParams{Behavior: browser.SetDownloadBehaviorBehaviorDeny})
	}
	if err == nil {
		err = chromedp.Listen(tab, b.onEvent)
	}
	if err != nil {
		b.Close()
		if hung {
			return nil, fmt.Errorf("record web: chromium %s did not start within %v", exe, max(o.Timeout, 30*time.Second))
		}
		if ctx.Err() != nil {
			return nil, fmt.Errorf("record web: starting chromium: %w", ctx.Err())
		}
		return nil, fmt.Errorf("record web: starting chromium %s: %w", exe, err)
	}
	return b, nil
}

// onEvent follows the main frame's loads. It runs on chromedp's reading
// goroutine: it must not block or call the browser.
func (b *Browser) onEvent(ev any) {
	b.mu.Lock()
	defer b.mu.Unlock()
	switch e := ev.(type) {
	case *page.EventFrameStartedLoading:
		if e.FrameID == b.mainFrame {
			b.starts++
			b.loading = true
		}
	case *page.EventFrameStoppedLoading:
		if e.FrameID == b.mainFrame {
			b.stops++
			b.loading = false
			b.lastLoad = time.Now()
		}
	case *page.EventNavigatedWithinDocument:
		if e.FrameID == b.mainFrame {
			b.inDoc++
		}
	case *page.EventJavascriptDialogOpening:
		b.dialogs++
		go func() {
			ctx, cancel := context.WithTimeout(b.tab, 5*time.Second)
			defer cancel()
			chromedp.Call(ctx, page.HandleJavaScriptDialog, page.HandleJavaScriptDialogParams{Accept: false})
		}()
	}
}

// counts returns the load counters.
func (b *Browser) counts() (starts, stops, inDoc int, loading bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.starts, b.stops, b.inDoc, b.loading
}

// Profile returns the temporary profile folder (gone after Close).
func (b *Browser) Profile() string { return b.profile }

// Close ends Chromium and removes its profile and its singleton socket. It
// is safe to call more than once.
func (b *Browser) Close() error {
	if b.closeTab == nil {
		return nil
	}
	b.closeTab()
	b.closeAlloc()
	b.closeTab, b.closeAlloc = nil, nil
	// Chromium's helpers can outlive it for a moment and write into the
	// profile: end the ones started with it, then remove it.
	killUsing(b.profile)
	// A Chromium that did not shut down itself leaves its singleton socket
	// folder in the temporary folder; the profile links to it.
	if sock, err := os.Readlink(filepath.Join(b.profile, "SingletonSocket")); err == nil {
		if d := filepath.Dir(sock); strings.HasPrefix(filepath.Base(d), "org.chromium.Chromium.") {
			os.RemoveAll(d)
		}
	}
	var err error
	for range 50 {
		if err = os.RemoveAll(b.profile); err == nil {
			if _, serr := os.Stat(b.profile); os.IsNotExist(serr) {
				return nil
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	return fmt.Errorf("record web: removing the browser profile %s: %w", b.profile, err)
}

// step runs f against the tab within the action timeout.
func (b *Browser) step(what string, f func(ctx context.Context, t *chromedp.Target) error) error {
	ctx, cancel := context.WithTimeout(b.tab, b.timeout)
	defer cancel()
	err := chromedp.Do(ctx, chromedp.Func(f))
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) && b.tab.Err() == nil {
			return fmt.Errorf("record web: %s: no answer within %v", what, b.timeout)
		}
		return fmt.Errorf("record web: %s: %w", what, err)
	}
	return nil
}

// Navigate loads url and waits for the page to settle.
func (b *Browser) Navigate(url string) error {
	s0, _, d0, _ := b.counts()
	if err := b.step("goto "+url, func(ctx context.Context, t *chromedp.Target) error {
		res, err := cdp.Call(ctx, t, page.Navigate, page.NavigateParams{URL: url})
		if err == nil && res.ErrorText != "" {
			err = errors.New(res.ErrorText)
		}
		return err
	}); err != nil {
		return err
	}
	return b.settle(s0, d0, 2*time.Second)
}

// MarkHistory records the current history entry as the first page: Back
// never goes before it (to about:blank).
func (b *Browser) MarkHistory() error {
	return b.step("history", func(ctx context.Context, t *chromedp.Target) error {
		h, err := cdp.Call(ctx, t, page.GetNavigationHistory, cdp.Empty{})
		b.historyBase = h.CurrentIndex
		return err
	})
}

// CanGoBack reports whether there is a page to go back to.
func (b *Browser) CanGoBack() (bool, error) {
	var ok bool
	err := b.step("history", func(ctx context.Context, t *chromedp.Target) error {
		h, err := cdp.Call(ctx, t, page.GetNavigationHistory, cdp.Empty{})
		ok = err == nil && h.CurrentIndex > b.historyBase && h.CurrentIndex < int64(len(h.Entries))
		return err
	})
	return ok, err
}

// Act performs a, resolving Goto paths on site, and returns how long the
// action took and how long the page took to settle after it.
func (b *Browser) Act(a Action, site *Site) (act, settle time.Duration, err error) {
	s0, _, d0, _ := b.counts()
	t0 := time.Now()
	switch a.Kind {
	case Click:
		err = b.step("click", func(ctx context.Context, t *chromedp.Target) error {
			if _, err := chromedp.MouseEvent(chromedp.MouseMoved, a.X, a.Y)(ctx, t); err != nil {
				return err
			}
			_, err := chromedp.MouseClickXY(a.X, a.Y)(ctx, t)
			return err
		})
	case Scroll:
		err = b.step("scroll", func(ctx context.Context, t *chromedp.Target) error {
			_, err := cdp.Call(ctx, t, dispatchWheel, wheelParams{
				Type: chromedp.MouseWheel, X: float64(b.width) / 2, Y: float64(b.height) / 2, DeltaX: 0, DeltaY: a.DY,
			})
			return err
		})
	case Type:
		err = b.step("type", func(ctx context.Context, t *chromedp.Target) error {
			_, err := chromedp.KeyEvent(a.Text)(ctx, t)
			return err
		})
	case PressEnter:
		err = b.step("press-enter", func(ctx context.Context, t *chromedp.Target) error {
			_, err := chromedp.KeyEvent("\r")(ctx, t)
			return err
		})
	case Back:
		err = b.step("back", func(ctx context.Context, t *chromedp.Target) error {
			h, err := cdp.Call(ctx, t, page.GetNavigationHistory, cdp.Empty{})
			if err != nil {
				return err
			}
			if h.CurrentIndex <= b.historyBase || h.CurrentIndex >= int64(len(h.Entries)) {
				return errors.New("no page to go back to")
			}
			_, err = cdp.Call(ctx, t, page.NavigateToHistoryEntry, page.NavigateToHistoryEntryParams{EntryID: h.Entries[h.CurrentIndex-1].ID})
			return err
		})
	case Goto:
		url := site.Resolve(a.Text)
		err = b.step("goto "+url, func(ctx context.Context, t *chromedp.Target) error {
			res, err := cdp.Call(ctx, t, page.Navigate, page.NavigateParams{URL: url})
			if err == nil && res.ErrorText != "" {
				err = errors.New(res.ErrorText)
			}
			return err
		})
	default:
		err = fmt.Errorf("record web: unknown action %q", a.Kind)
	}
	act = time.Since(t0)
	if err != nil {
		return act, 0, err
	}
	t1 := time.Now()
	var wait time.Duration // how long a navigation may take to start
	switch {
	case a.Kind == Click && a.Link, a.Kind == PressEnter, a.Kind == Back:
		wait = 300 * time.Millisecond
	case a.Kind == Goto:
		wait = 2 * time.Second
	}
	err = b.settle(s0, d0, wait)
	return act, time.Since(t1), err
}

// settle waits for the page to be still after an action: a main-frame load
// that started (or starts within wait) has stopped, and then stillJS.
func (b *Browser) settle(s0, d0 int, wait time.Duration) error {
	deadline := time.Now().Add(b.timeout)
	startBy := time.Now().Add(wait)
	for {
		starts, stops, inDoc, loading := b.counts()
		switch {
		case starts > s0 && !loading && stops >= starts:
			// the load finished
		case starts > s0:
			if time.Now().After(deadline) {
				return fmt.Errorf("record web: page load: not finished within %v", b.timeout)
			}
			time.Sleep(5 * time.Millisecond)
			continue
		case inDoc > d0, time.Now().After(startBy):
			// no load is coming
		default:
			if err := b.tab.Err(); err != nil {
				return fmt.Errorf("record web: %w", err)
			}
			time.Sleep(5 * time.Millisecond)
			continue
		}
		break
	}
	return b.step("settle", func(ctx context.Context, t *chromedp.Target) error {
		_, err := chromedp.Evaluate[int](stillJS, chromedp.EvalAwaitPromise)(ctx, t)
		return err
	})
}

// stillJS resolves when the scroll position, the document state and the
// DOM held still for two animation frames in a row, or after 30 frames
// (about half a second): a page that fills itself in by script, such as
// Sphinx's search results, is captured when done or after that long.
const stillJS = `new Promise(resolve => {
  let mutations = 0;
  const mo = new MutationObserver(ms => { mutations += ms.length; });
  mo.observe(document, { subtree: true, childList: true, characterData: true, attributes: true });
  let last = "", same = 0, n = 0;
  const tick = () => {
    const s = window.scrollX + "," + window.scrollY + "," + document.readyState + "," + mutations;
    same = s === last ? same + 1 : 0;
    last = s;
    if (same >= 2 || ++n > 30) { mo.disconnect(); resolve(n); return; }
    requestAnimationFrame(tick);
  };
  requestAnimationFrame(tick);
})`

// Screenshot returns the viewport as a PNG.
func (b *Browser) Screenshot() ([]byte, error) {
	var png []byte
	err := b.step("screenshot", func(ctx context.Context, t *chromedp.Target) error {
		res, err := cdp.Call(ctx, t, page.CaptureScreenshot, page.CaptureScreenshotParams{
			Format: page.CaptureScreenshotFormatPng, FromSurface: ptr(true),
		})
		png = res.Data
		return err
	})
	return png, err
}

// Observe reads the page (observe.js).
func (b *Browser) Observe() (*Page, error) {
	var p Page
	err := b.step("reading the page", func(ctx context.Context, t *chromedp.Target) error {
		var err error
		p, err = chromedp.Evaluate[Page](observeJS)(ctx, t)
		return err
	})
	if err != nil {
		return nil, err
	}
	return &p, nil
}

// Recover stops any load and goes to url: the way out of an action that
// failed or hung.
func (b *Browser) Recover(url string) error {
	b.step("stop", func(ctx context.Context, t *chromedp.Target) error {
		_, err := cdp.Call(ctx, t, page.StopLoading, cdp.Empty{})
		return err
	})
	return b.Navigate(url)
}

// wheelParams are the raw parameters of a mouseWheel event. cdproto's own
// type drops a zero deltaX, which Chromium refuses.
type wheelParams struct {
	Type   input.DispatchMouseEventType `json:"type"`
	X      float64                      `json:"x"`
	Y      float64                      `json:"y"`
	DeltaX float64                      `json:"deltaX"`
	DeltaY float64                      `json:"deltaY"`
}

// dispatchWheel is Input.dispatchMouseEvent with wheelParams.
var dispatchWheel = cdp.Command[wheelParams, cdp.Empty]{Method: input.CommandDispatchMouseEvent}

func ptr[T any](v T) *T { return &v }
