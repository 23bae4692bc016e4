package web

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"image/png"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/memowm/memowm/recording"
)

// memSink keeps a recording in memory.
type memSink struct {
	pngs    [][]byte
	facts   []map[string]any
	actions []recording.Action
	timings []map[string]any
}

func (m *memSink) AddPNG(png []byte, facts map[string]any) error {
	m.pngs = append(m.pngs, png)
	m.facts = append(m.facts, facts)
	return nil
}
func (m *memSink) AddAction(a recording.Action) error { m.actions = append(m.actions, a); return nil }
func (m *memSink) AddTiming(t map[string]any) error   { m.timings = append(m.timings, t); return nil }

// needChromium skips a test on a machine without Chromium.
// Under MEMOWM_RECORDERS=1 (set by .ci/run, which installs Chromium) a
// missing Chromium fails the test instead.
func needChromium(t *testing.T) {
	t.Helper()
	if _, err := FindChromium(""); err != nil {
		if os.Getenv("MEMOWM_RECORDERS") == "1" {
			t.Fatalf("%v; MEMOWM_RECORDERS=1 makes this a failure (.ci/run installs it)", err)
		}
		t.Skip("skipped: chromium is not installed (apt-get install chromium; MEMOWM_RECORDERS=1 makes this a failure)")
	}
}

// privateTemp points the temporary folder at a fresh one, so that a test
// sees whether the browser profile is left behind.
func privateTemp(t *testing.T) string {
	dir := t.TempDir()
	t.Setenv("TMPDIR", dir)
	return dir
}

func leftovers(t *testing.T, tmp string) {
	t.Helper()
	ents, _ := os.ReadDir(tmp)
	for _, e := range ents {
		t.Errorf("left behind in the temporary folder: %s", e.Name())
	}
}

func TestRecordTinySite(t *testing.T) {
	needChromium(t)
	tmp := privateTemp(t)
	const steps = 10
	record := func() (*Result, *memSink) {
		var sink memSink
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		res, err := Record(ctx, Config{Site: "testdata/site", Steps: steps, Seed: 1, Width: 320, Height: 200, Log: t.Logf}, &sink)
		if err != nil {
			t.Fatal(err)
		}
		return res, &sink
	}
	res, sink := record()
	leftovers(t, tmp)

	if res.Steps != steps || len(sink.actions) != steps || len(sink.pngs) != steps+1 || len(sink.facts) != steps+1 || len(sink.timings) != steps {
		t.Fatalf("%d steps: %d actions, %d screenshots, %d facts, %d timings", res.Steps, len(sink.actions), len(sink.pngs), len(sink.facts), len(sink.timings))
	}
	for i, b := range sink.pngs {
		cfg, err := png.DecodeConfig(bytes.NewReader(b))
		if err != nil || cfg.Width != 320 || cfg.Height != 200 {
			t.Fatalf("screenshot %d: %v %dx%d", i, err, cfg.Width, cfg.Height)
		}
	}
	for i, a := range sink.actions {
		if _, err := a.Trajectory(); err != nil {
			t.Errorf("action %d %+v: %v", i, a, err)
		}
	}
	for i, f := range sink.facts {
		url, _ := f["url"].(string)
		title, _ := f["title"].(string)
		if !strings.HasPrefix(url, "/") || title == "" {
			t.Errorf("facts %d: %v", i, f)
		}
		for _, k := range []string{"focused", "typed", "heading", "section", "scroll", "scroll_pct"} {
			if _, ok := f[k]; !ok {
				t.Errorf("facts %d: no %q: %v", i, k, f)
			}
		}
	}
	if sink.facts[0]["title"] != "Tiny Site Home" || sink.facts[0]["url"] != "/" {
		t.Errorf("first page: %v", sink.facts[0])
	}
	for i, tm := range sink.timings {
		for _, k := range []string{"act", "settle", "screenshot", "facts", "total"} {
			if v, ok := tm[k].(float64); !ok || v < 0 {
				t.Errorf("timing %d: %s = %v", i, k, tm[k])
			}
		}
	}
	if res.Change.Steps != steps || res.Change.Changed == 0 {
		t.Errorf("screen changes: %+v", res.Change)
	}
	if res.Recoveries != 0 {
		t.Errorf("%d recoveries on the tiny site: %v", res.Recoveries, res.Errors)
	}
	for i, a := range sink.actions {
		t.Logf("%2d %+v -> %v", i, a, sink.facts[i+1]["url"])
	}

	// The site is static, so a second recording with the seed takes the
	// same actions through the same pages.
	_, again := record()
	if !reflect.DeepEqual(sink.actions, again.actions) {
		t.Errorf("the same seed took other actions:\n%v\n%v", sink.actions, again.actions)
	}
	for i := range sink.facts {
		if sink.facts[i]["url"] != again.facts[i]["url"] {
			t.Errorf("step %d: url %v, then %v", i, sink.facts[i]["url"], again.facts[i]["url"])
		}
	}
}

// slowSite serves a start page whose only link leads to a page that never
// finishes loading (HEAD answers at once, so the link looks fine).
func slowSite(t *testing.T) *httptest.Server {
	release := make(chan struct{})
	mux := http.NewServeMux()
	mux.HandleFunc("/start.html", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<!DOCTYPE html><title>Start</title><h1>Start</h1><p><a href="slow.html" style="font-size:40px">slow page</a></p>`)
	})
	mux.HandleFunc("/slow.html", func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodHead {
			return
		}
		select {
		case <-release:
		case <-r.Context().Done():
		}
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(func() { close(release); srv.Close() })
	return srv
}

func TestRecordRecoversFromHang(t *testing.T) {
	needChromium(t)
	tmp := privateTemp(t)
	srv := slowSite(t)
	var sink memSink
	var logged []string
	cfg := Config{Site: srv.URL + "/start.html", Steps: 2, Seed: 1, Width: 320, Height: 200, Timeout: time.Second,
		Log: func(f string, a ...any) { logged = append(logged, fmt.Sprintf(f, a...)) }}
	start := time.Now()
	res, err := Record(context.Background(), cfg, &sink)
	if err != nil {
		t.Fatal(err)
	}
	leftovers(t, tmp)
	if res.Recoveries == 0 || len(logged) == 0 {
		t.Fatalf("no recovery: %+v", res)
	}
	if !strings.Contains(logged[0], "not finished within 1s") && !strings.Contains(logged[0], "no answer within 1s") {
		t.Errorf("recovery log: %q", logged[0])
	}
	if a := sink.actions[0]; a.Type != "goto" || a.Text != "/start.html" {
		t.Errorf("the failed step was recorded as %+v, want goto /start.html", a)
	}
	if sink.facts[1]["url"] != "/start.html" {
		t.Errorf("after the recovery: %v", sink.facts[1])
	}
	if d := time.Since(start); d > 30*time.Second {
		t.Errorf("two steps with a 1 s timeout took %v", d)
	}
}

func TestRecordCancel(t *testing.T) {
	needChromium(t)
	tmp := privateTemp(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cfg := Config{Site: "testdata/site", Steps: 1000, Seed: 1, Width: 320, Height: 200,
		Progress: func(done, total int) {
			if done == 3 {
				cancel()
			}
		}}
	res, err := Record(ctx, cfg, &memSink{})
	if err == nil || !errors.Is(err, context.Canceled) || !strings.HasPrefix(err.Error(), "record web: ") {
		t.Fatalf("canceled recording: %v, %v", res, err)
	}
	leftovers(t, tmp)
}

func TestBrowserClose(t *testing.T) {
	needChromium(t)
	tmp := privateTemp(t)
	b, err := StartBrowser(context.Background(), BrowserOptions{Width: 200, Height: 100, Timeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	profile := b.Profile()
	if filepath.Dir(profile) != tmp {
		t.Errorf("profile %s is not in the temporary folder %s", profile, tmp)
	}
	if _, err := os.Stat(profile); err != nil {
		t.Fatalf("profile: %v", err)
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	if err := b.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if _, err := os.Stat(profile); !os.IsNotExist(err) {
		t.Errorf("profile %s still there: %v", profile, err)
	}
	leftovers(t, tmp)
}

func TestNoChromium(t *testing.T) {
	_, err := FindChromium("/nonexistent/chromium")
	if !errors.Is(err, ErrNoChromium) || !strings.Contains(err.Error(), "record web: chromium not found: apt-get install chromium") {
		t.Fatalf("got %v", err)
	}
	_, err = Record(context.Background(), Config{Site: "testdata/site", Steps: 1, Chromium: "/nonexistent/chromium"}, &memSink{})
	if !errors.Is(err, ErrNoChromium) {
		t.Fatalf("Record without chromium: %v", err)
	}
}

func TestConfigValidate(t *testing.T) {
	for _, c := range []Config{
		{Steps: 1},
		{Site: "x", Steps: 0},
		{Site: "x", Steps: 1, Width: 10},
		{Site: "x", Steps: 1, Timeout: time.Millisecond},
	} {
		if err := c.Validate(); err == nil || !strings.HasPrefix(err.Error(), "record web: ") {
			t.Errorf("%+v: %v", c, err)
		}
	}
	if err := (Config{Site: "x", Steps: 1}).Validate(); err != nil {
		t.Error(err)
	}
}

// TestFixture reads the committed real recording of python3-doc
// (testdata/README.md) and checks what the recorder promises of it.
func TestFixture(t *testing.T) {
	rec, err := recording.Read("testdata/python3-doc.rec")
	if err != nil {
		t.Fatal(err)
	}
	if rec.Steps != 151 || rec.Meta.Kind != "web" || rec.Meta.Width != 320 || rec.Meta.Height != 200 {
		t.Fatalf("%d steps, %+v", rec.Steps, rec.Meta)
	}
	kinds := map[string]int{}
	for _, a := range rec.Actions {
		kinds[a.Type]++
	}
	for _, k := range []Kind{Click, Scroll, Type, PressEnter, Back, Goto} {
		if kinds[string(k)] == 0 {
			t.Errorf("no %s action: %v", k, kinds)
		}
	}
	facts, err := os.ReadFile("testdata/python3-doc.rec/" + recording.FactsFile)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(facts)), "\n")
	if len(lines) != 151 {
		t.Fatalf("%d facts lines", len(lines))
	}
	for i, l := range lines {
		for _, k := range []string{`"url":"/`, `"title":`, `"focused":`, `"typed":`, `"heading":`, `"scroll":`, `"scroll_pct":`} {
			if !strings.Contains(l, k) {
				t.Fatalf("facts %d lack %s: %s", i, k, l)
			}
		}
	}
	if testing.Short() {
		return
	}
	out := filepath.Join(t.TempDir(), "f.arrow")
	sum, err := recording.Import([]string{"testdata/python3-doc.rec"}, out, recording.ImportOptions{Seed: 5})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Observations != 151 || sum.Questions == 0 {
		t.Errorf("import: %+v", sum)
	}
}
