package main

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/memowm/memowm/opq"
	"github.com/memowm/memowm/trajectory"
)

// TestQuantizeStreamed: quantize, which quantizes states as the Reader
// streams them and measures them batch by batch, writes every state's own
// codes (opq.Quantizer.Encode) and reports the R^2 and MSE that Evaluate
// gives on all the states at once, over episodes that do not fill their
// last record batch.
func TestQuantizeStreamed(t *testing.T) {
	dir := t.TempDir()
	p := func(n string) string { return filepath.Join(dir, n) }
	for _, args := range [][]string{
		{"sim", "--episodes", "3", "--steps", "100", "--dim", "32", "--seed", "5", "--out", p("s.arrow"), "--quiet"},
		{"fit", "opq", "--in", p("s.arrow"), "--out", p("q.opq"), "--codewords", "16", "--quiet"},
	} {
		if code, _, errs := memowm(t, args...); code != 0 {
			t.Fatalf("%v: %s", args, errs)
		}
	}
	code, out, errs := memowm(t, "quantize", "--opq", p("q.opq"), "--in", p("s.arrow"), "--out", p("c.arrow"), "--quiet")
	if code != 0 {
		t.Fatalf("quantize: %d %s", code, errs)
	}
	q, err := opq.Load(p("q.opq"))
	if err != nil {
		t.Fatal(err)
	}
	states, _, err := readStates(p("s.arrow"), func(string, ...any) {})
	if err != nil {
		t.Fatal(err)
	}
	want, err := q.Evaluate(states)
	if err != nil {
		t.Fatal(err)
	}
	if line := "quality  " + want.String() + "\n"; !strings.Contains(out, line) {
		t.Errorf("quantize reports\n%swant the line %q (Evaluate on all the states)", out, line)
	}
	r, err := trajectory.Open(p("c.arrow"))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	i := 0
	for {
		ep, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		for step, codes := range ep.Codes {
			c, err := q.Encode(states[i])
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(c, codes) {
				t.Fatalf("episode %d step %d: the written codes are not the state's own", ep.ID, step)
			}
			i++
		}
	}
	if i != len(states) {
		t.Fatalf("%d codes for %d states", i, len(states))
	}
}

// TestQuantizeFailureLeavesNothing: a quantize that fails on a damaged
// episode after writing others leaves no output and no temporary file.
func TestQuantizeFailureLeavesNothing(t *testing.T) {
	dir := t.TempDir()
	p := func(n string) string { return filepath.Join(dir, n) }
	for _, args := range [][]string{
		{"sim", "--episodes", "6", "--steps", "40", "--dim", "32", "--out", p("s.arrow"), "--quiet"},
		{"fit", "opq", "--in", p("s.arrow"), "--out", p("q.opq"), "--codewords", "8", "--quiet"},
	} {
		if code, _, errs := memowm(t, args...); code != 0 {
			t.Fatalf("%v: %s", args, errs)
		}
	}
	data, err := os.ReadFile(p("s.arrow"))
	if err != nil {
		t.Fatal(err)
	}
	// Flip a byte in the last episode's states: its checksum then fails
	// after five episodes are written.
	bad := slices.Clone(data)
	bad[len(bad)*5/6] ^= 0x40
	if err := os.WriteFile(p("bad.arrow"), bad, 0o644); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadDir(dir)
	code, _, errs := memowm(t, "quantize", "--opq", p("q.opq"), "--in", p("bad.arrow"), "--out", p("c.arrow"), "--quiet")
	if code != 1 || !strings.Contains(errs, "episode 5 (episode 6 in the file)") || !strings.Contains(errs, "checksum mismatch") {
		t.Fatalf("quantize of a file whose last episode is damaged: status %d, %q", code, errs)
	}
	after, _ := os.ReadDir(dir)
	if len(after) != len(before) {
		var names []string
		for _, e := range after {
			names = append(names, e.Name())
		}
		t.Fatalf("a failed quantize left files behind: %v", names)
	}
}

// peakLiveHeap runs f while measuring the live heap after a collection
// every few milliseconds, and returns its peak above the live heap before.
func peakLiveHeap(f func()) uint64 {
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	live := func() uint64 {
		runtime.GC()
		metrics.Read(s)
		return s[0].Value.Uint64()
	}
	base := live()
	done := make(chan struct{})
	peak := make(chan uint64)
	go func() {
		var p uint64
		for {
			select {
			case <-done:
				peak <- p
				return
			case <-time.After(5 * time.Millisecond):
				p = max(p, live())
			}
		}
	}()
	f()
	close(done)
	return max(<-peak, base) - base
}

// TestSimQuantizeBoundedMemory: sim, sim --opq and quantize of one episode of
// 4,000 steps hold a few MB more than of 200 steps, while its states are
// 33 MB: no episode is held as states.
func TestSimQuantizeBoundedMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 66 MB")
	}
	dir := t.TempDir()
	p := func(n string) string { return filepath.Join(dir, n) }
	steps := []string{"200", "4000"}
	run := func(args ...string) uint64 {
		t.Helper()
		var code int
		var errs string
		peak := peakLiveHeap(func() { code, _, errs = memowm(t, args...) })
		if code != 0 {
			t.Fatalf("%v: %d %s", args, code, errs)
		}
		return peak
	}
	sim := func(n string, extra ...string) []string {
		return append([]string{"sim", "--episodes", "1", "--steps", n, "--dim", "64", "--quiet"}, extra...)
	}
	var peaks [3][2]uint64
	for k, n := range steps {
		peaks[0][k] = run(sim(n, "--out", p("s"+n+".arrow"))...)
	}
	if code, _, errs := memowm(t, "fit", "opq", "--in", p("s200.arrow"), "--out", p("q.opq"), "--codewords", "16", "--quiet"); code != 0 {
		t.Fatal(errs)
	}
	for k, n := range steps {
		peaks[1][k] = run(sim(n, "--out", p("c"+n+".arrow"), "--opq", p("q.opq"))...)
		peaks[2][k] = run("quantize", "--opq", p("q.opq"), "--in", p("s"+n+".arrow"), "--out", p("z"+n+".arrow"), "--quiet")
	}
	const states = 4001 * 32 * 64 * 4
	for i, verb := range []string{"sim", "sim --opq", "quantize"} {
		short, long := peaks[i][0], peaks[i][1]
		t.Logf("%s: peak live heap %.1f MB for 201 observations, %.1f MB for 4,001", verb, float64(short)/1e6, float64(long)/1e6)
		if long > short+states/3 {
			t.Errorf("%s: one episode of 4,001 observations peaks at %.1f MB of live heap, of 201 at %.1f MB: memory grows with the episode (its states are %.1f MB)",
				verb, float64(long)/1e6, float64(short)/1e6, float64(states)/1e6)
		}
	}
}
