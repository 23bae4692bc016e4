package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memowm/memowm/record/web"
	"github.com/memowm/memowm/recording"
	"github.com/memowm/memowm/trajectory"
)

const webSite = "../../record/web/testdata/site"

func TestRecordWebUsage(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "w.arrow")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--steps", "3", "--out", out}, "--site DIR|URL is required"},
		{[]string{"--site", webSite, "--steps", "3"}, "--out FILE is required"},
		{[]string{"--site", webSite, "--steps", "0", "--out", out}, "steps 0"},
		{[]string{"--site", webSite, "--out", filepath.Join(dir, "w.txt")}, "w.txt"},
		{[]string{"--site", webSite, "--out", out, "--width", "10"}, "viewport 10x400"},
		{[]string{"--site", webSite, "--out", out, "extra"}, `unexpected argument "extra"`},
	} {
		code, _, errs := memowm(t, append([]string{"record", "web"}, c.args...)...)
		if code != 2 || !strings.Contains(errs, c.want) {
			t.Errorf("%v: status %d, %q; want 2 and %q", c.args, code, errs, c.want)
		}
	}
	code, out2, _ := memowm(t, "record", "web", "-h")
	if code != 0 || !strings.Contains(out2, "--site") || !strings.Contains(out2, "--timeout") {
		t.Errorf("-h: %d %s", code, out2)
	}
}

func TestRecordWebErrors(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "w.arrow")
	code, _, errs := memowm(t, "record", "web", "--site", webSite, "--out", out, "--chromium", "/nonexistent/chromium")
	if code != 1 || !strings.Contains(errs, "record web: chromium not found: apt-get install chromium") {
		t.Errorf("no chromium: %d %q", code, errs)
	}
	// Errors in what the user typed come before the search for Chromium:
	// these hold on a machine without it (--chromium names none here).
	empty := filepath.Join(dir, "empty")
	os.MkdirAll(empty, 0o755)
	os.WriteFile(filepath.Join(empty, "a.txt"), []byte("x"), 0o644)
	notRec := filepath.Join(dir, "notrec")
	os.MkdirAll(notRec, 0o755)
	os.WriteFile(filepath.Join(notRec, "keep.txt"), []byte("mine"), 0o644)
	for _, chromium := range []string{"", "/nonexistent/chromium"} {
		extra := []string{}
		if chromium != "" {
			extra = []string{"--chromium", chromium}
		}
		for _, c := range []struct {
			args []string
			want string
		}{
			{[]string{"--site", empty, "--out", out, "--quiet"}, "no HTML files"},
			{[]string{"--site", filepath.Join(dir, "nosuch"), "--out", out}, "nosuch"},
			{[]string{"--site", webSite, "--out", out, "--dir", notRec}, "is not a recording folder"},
		} {
			code, _, errs := memowm(t, append(append([]string{"record", "web"}, c.args...), extra...)...)
			if code != 1 || !strings.Contains(errs, c.want) || strings.Contains(errs, "chromium not found") {
				t.Errorf("%v %v: %d %q; want 1 and %q", c.args, extra, code, errs, c.want)
			}
		}
	}
	// Nothing was written by any of these.
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if e.Name() != "notrec" && e.Name() != "empty" {
			t.Errorf("left behind: %s", e.Name())
		}
	}
	if got, _ := os.ReadFile(filepath.Join(notRec, "keep.txt")); string(got) != "mine" {
		t.Errorf("notrec/keep.txt: %q", got)
	}
}

func TestRecordWeb(t *testing.T) {
	needTool(t, "chromium", func() error { _, err := web.FindChromium(""); return err })
	dir := t.TempDir()
	out := filepath.Join(dir, "w.arrow")
	code, stdout, errs := memowm(t, "record", "web", "--site", webSite, "--steps", "8", "--seed", "2",
		"--width", "320", "--height", "200", "--out", out, "--quiet")
	if code != 0 {
		t.Fatalf("status %d\n%s%s", code, stdout, errs)
	}
	if errs != "" {
		t.Errorf("--quiet printed %q", errs)
	}
	for _, want := range []string{"recorded " + out + ".rec: 8 steps", "per-step time: mean", "screenshot mean", "screen changes:", "wrote " + out + ": 1 episode, 9 observations"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("output lacks %q:\n%s", want, stdout)
		}
	}
	rec, err := recording.Read(out + ".rec")
	if err != nil {
		t.Fatal(err)
	}
	if rec.Steps != 9 || rec.Meta.Kind != "web" || rec.Meta.Width != 320 || rec.Meta.Height != 200 || rec.Meta.Seed != 2 {
		t.Errorf("recording: %d steps, %+v", rec.Steps, rec.Meta)
	}
	if _, err := os.Stat(filepath.Join(out+".rec", recording.TimingFile)); err != nil {
		t.Error(err)
	}
	sum, err := trajectory.Summarize(out)
	if err != nil || sum.Observations != 9 {
		t.Fatalf("trajectory: %+v %v", sum, err)
	}
	// Recording again needs --force, and then replaces the folder.
	code, _, errs = memowm(t, "record", "web", "--site", webSite, "--steps", "3", "--width", "320", "--height", "200", "--out", out, "--quiet")
	if code != 2 || !strings.Contains(errs, "--force") {
		t.Fatalf("again without --force: %d %s", code, errs)
	}
	code, _, errs = memowm(t, "record", "web", "--site", webSite, "--steps", "3", "--width", "320", "--height", "200", "--out", out, "--quiet", "--force")
	if code != 0 {
		t.Fatalf("again: %d %s", code, errs)
	}
	if rec, err := recording.Read(out + ".rec"); err != nil || rec.Steps != 4 {
		t.Fatalf("again: %v", err)
	}
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if strings.Contains(e.Name(), ".tmp-") {
			t.Errorf("left behind: %s", e.Name())
		}
	}
}
