package web

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// flakyChromium writes a stand-in for Chromium that exits at once on its
// first fails starts (counting them in a file) and then runs real.
func flakyChromium(t *testing.T, real string, fails int) (exe, count string) {
	t.Helper()
	dir := t.TempDir()
	exe, count = filepath.Join(dir, "chromium"), filepath.Join(dir, "starts")
	script := "#!/bin/sh\n" +
		"echo x >> " + count + "\n" +
		"if [ $(wc -l < " + count + ") -le " + strconv.Itoa(fails) + " ]; then echo 'crashed at start-up' >&2; exit 1; fi\n" +
		"exec " + real + " \"$@\"\n"
	if err := os.WriteFile(exe, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return exe, count
}

// starts is how many times the stand-in was started.
func starts(count string) int {
	data, _ := os.ReadFile(count)
	return strings.Count(string(data), "\n")
}

// TestStartRetriesAStartupCrash: a Chromium that exits during its start-up
// once is started again and works; one that always does is an error after
// startTries starts, which names the failure.
func TestStartRetriesAStartupCrash(t *testing.T) {
	needChromium(t)
	real, err := FindChromium("")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	exe, count := flakyChromium(t, real, 1)
	b, err := StartBrowser(ctx, BrowserOptions{Chromium: exe, Width: 320, Height: 200, Timeout: 30 * time.Second})
	if err != nil {
		t.Fatalf("a Chromium that crashed once: %v", err)
	}
	b.Close()
	if n := starts(count); n != 2 {
		t.Errorf("%d starts, want 2", n)
	}
	exe, count = flakyChromium(t, real, 9)
	if _, err := StartBrowser(ctx, BrowserOptions{Chromium: exe, Width: 320, Height: 200, Timeout: 30 * time.Second}); err == nil || !strings.Contains(err.Error(), "chrome failed to start") {
		t.Fatalf("a Chromium that always crashes: %v", err)
	}
	if n := starts(count); n != startTries {
		t.Errorf("%d starts, want %d", n, startTries)
	}
}
