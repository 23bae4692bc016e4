package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/memowm/memowm/internal/atomicfile"
	"github.com/memowm/memowm/record/web"
	"github.com/memowm/memowm/trajectory"
)

// syncBuffer is a child's stderr, read while the child runs.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// interruptChild runs memowm args in a child process (through runMain, as
// the memowm binary does), sends sig once ready (polled every 5 ms) reports
// that the child is at work, and returns its exit status and stderr. It
// fails the test if the child ends first.
func interruptChild(t *testing.T, sig syscall.Signal, ready func(stderr string) bool, args ...string) (int, string) {
	t.Helper()
	cmd := child(t, "2", args...)
	var errb syncBuffer
	cmd.Stderr = &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	deadline := time.After(3 * time.Minute)
	for !ready(errb.String()) {
		select {
		case err := <-exited:
			t.Fatalf("%v ended (%v) before it could be interrupted:\n%s", args, err, errb.String())
		case <-deadline:
			cmd.Process.Kill()
			t.Fatalf("%v: never ready:\n%s", args, errb.String())
		case <-time.After(5 * time.Millisecond):
		}
	}
	cmd.Process.Signal(sig)
	err := <-exited
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatal(err)
	}
	return cmd.ProcessState.ExitCode(), errb.String()
}

// tempOf reports whether out has a temporary file (of at least minSize
// bytes) and, when it has, remembers its name in *seen.
func tempOf(out string, minSize int64, seen *string) func(string) bool {
	return func(string) bool {
		for _, l := range atomicfile.Leftovers(out) {
			if l.Size >= minSize {
				*seen = l.Path
				return true
			}
		}
		return false
	}
}

// TestInterruptRemovesTemporaries interrupts every verb that writes a file
// while it works (mid-write where the write takes time): each removes its
// temporary file, says so on stderr in one line, exits with 128 + the
// signal's number, and leaves nothing under the final names.
func TestInterruptRemovesTemporaries(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns long runs")
	}
	dir := t.TempDir()
	traj, small, bundle, mem := filepath.Join(dir, "t.arrow"), filepath.Join(dir, "s.arrow"), filepath.Join(dir, "b.mwb"), filepath.Join(dir, "m.mwm")
	mustRun(t,
		[]string{"sim", "--episodes", "200", "--steps", "30", "--dim", "32", "--out", traj, "--quiet"},
		[]string{"sim", "--episodes", "10", "--steps", "30", "--dim", "32", "--seed", "2", "--out", small, "--quiet"},
		[]string{"fit", "--in", small, "--out", bundle, "--preset", "tiny", "--quiet"},
		[]string{"encode", "--model", bundle, "--in", small, "--out", mem, "--quiet"},
	)
	recs := []string{}
	for range 200 {
		recs = append(recs, handwrittenRec)
	}
	cases := []struct {
		name    string
		sig     syscall.Signal
		out     string // the final name
		args    []string
		minSize int64  // the signal comes once the temporary file holds this many bytes; -1: no temporary file yet
		line    string // and once stderr holds this
	}{
		{"sim", syscall.SIGINT, "big.arrow", []string{"sim", "--episodes", "120", "--steps", "20"}, 1 << 20, ""},
		{"sim", syscall.SIGTERM, "big.parquet", []string{"sim", "--episodes", "120", "--steps", "20"}, 0, ""},
		{"import", syscall.SIGINT, "imp.arrow", append([]string{"import"}, recs...), 1 << 20, ""},
		{"quantize", syscall.SIGINT, "codes.npy", []string{"quantize", "--model", bundle, "--in", traj}, 0, ""},
		{"encode", syscall.SIGINT, "e.mwm", []string{"encode", "--model", bundle, "--in", traj, "--batch", "1"}, 0, "encode: 1/"},
		{"decode", syscall.SIGINT, "d.arrow", []string{"decode", "--model", bundle, "--in", mem, "--batch", "1", "--what", "states"}, 0, "decode: 1 of 10"},
		{"fit opq", syscall.SIGINT, "q.opq", []string{"fit", "opq", "--in", traj}, -1, "fit opq: k-means "},
		{"fit", syscall.SIGINT, "f.mwb", []string{"fit", "--in", traj, "--preset", "tiny"}, -1, "fit opq: k-means "},
		{"model init", syscall.SIGINT, "p.weights", []string{"model", "init", "--preset", "paper"}, 0, ""},
	}
	for _, c := range cases {
		t.Run(c.name+"-"+c.out, func(t *testing.T) {
			out := filepath.Join(dir, c.out)
			var seen string
			hasTemp := tempOf(out, c.minSize, &seen)
			ready := func(stderr string) bool {
				return (c.minSize < 0 || hasTemp(stderr)) && strings.Contains(stderr, c.line)
			}
			code, errs := interruptChild(t, c.sig, ready, append(c.args, "--out", out)...)
			lines := strings.Split(strings.TrimSpace(errs), "\n")
			last := lines[len(lines)-1]
			if code != 128+int(c.sig) || !strings.HasPrefix(last, "memowm "+c.name+": interrupted") || !strings.HasSuffix(last, "nothing written") {
				t.Fatalf("status %d, last line %q; want %d and 'memowm %s: interrupted ... nothing written'\n%s", code, last, 128+int(c.sig), c.name, errs)
			}
			if c.sig != syscall.SIGINT && !strings.Contains(last, "(terminated)") {
				t.Errorf("the message does not name the signal: %q", last)
			}
			if c.minSize >= 0 && (seen == "" || !strings.Contains(last, "; removed ") || !strings.Contains(last, seen)) {
				t.Errorf("the message does not name the temporary file %q: %q", seen, last)
			}
			for _, p := range trajectoryOutputs(out) {
				if _, err := os.Stat(p); !os.IsNotExist(err) {
					t.Errorf("left %s", p)
				}
				if l := atomicfile.Leftovers(p); len(l) > 0 {
					t.Errorf("left the temporary file %s", l[0].Path)
				}
			}
		})
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 6 {
		var names []string
		for _, e := range ents {
			names = append(names, e.Name())
		}
		t.Errorf("the folder holds %v; want the fixtures alone", names)
	}
}

// TestKilledRunLeftover kills a sim with SIGKILL mid-write: nothing appears
// under the final name; the next run ignores the leftover temporary file,
// names it on stderr and succeeds, and leaves it for the user to remove.
func TestKilledRunLeftover(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns a long sim")
	}
	dir := t.TempDir()
	out := filepath.Join(dir, "k.arrow")
	var seen string
	code, _ := interruptChild(t, syscall.SIGKILL, tempOf(out, 1<<20, &seen), "sim", "--episodes", "120", "--steps", "20", "--out", out, "--quiet")
	if code != -1 {
		t.Fatalf("status %d after SIGKILL", code)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Fatalf("a killed sim left %s", out)
	}
	if l := atomicfile.Leftovers(out); len(l) != 1 || l[0].Path != seen {
		t.Fatalf("leftovers %v; want %s", l, seen)
	}
	code, stdout, stderr := memowm(t, "sim", "--episodes", "2", "--steps", "3", "--dim", "8", "--out", out, "--quiet")
	if code != 0 || !strings.Contains(stdout, "2 episodes") {
		t.Fatalf("the next sim: %d\n%s%s", code, stdout, stderr)
	}
	if !strings.Contains(stderr, "note: "+seen+" (") || !strings.Contains(stderr, "left by a run that was killed") {
		t.Errorf("the next run does not name the leftover %s: %q", seen, stderr)
	}
	if _, err := os.Stat(seen); err != nil {
		t.Errorf("the leftover was removed: %v", err)
	}
}

// TestOutputSlips refuses, before any work and with status 2, an output that
// is an input (also through a symbolic or a hard link), an extension that
// does not name what the verb writes, and a folder that is missing; the
// inputs stay as they were.
func TestOutputSlips(t *testing.T) {
	dir := t.TempDir()
	traj, bundle, mem := filepath.Join(dir, "t.arrow"), filepath.Join(dir, "b.mwb"), filepath.Join(dir, "m.mwm")
	mustRun(t,
		[]string{"sim", "--episodes", "4", "--steps", "20", "--dim", "32", "--out", traj, "--quiet"},
		[]string{"fit", "--in", traj, "--out", bundle, "--preset", "tiny", "--quiet"},
		[]string{"encode", "--model", bundle, "--in", traj, "--out", mem, "--quiet"},
	)
	sym, hard := filepath.Join(dir, "sym.arrow"), filepath.Join(dir, "hard.arrow")
	if err := os.Symlink(traj, sym); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(traj, hard); err != nil {
		t.Fatal(err)
	}
	symMem := filepath.Join(dir, "sym.mwm")
	os.Symlink(mem, symMem)
	before := map[string][]byte{}
	for _, p := range []string{traj, bundle, mem, trajectory.QuestionsPath(traj)} {
		before[p], _ = os.ReadFile(p)
	}
	nodir := filepath.Join(dir, "nodir")
	file := filepath.Join(dir, "afile")
	os.WriteFile(file, nil, 0o644)
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"encode", "--model", bundle, "--in", traj, "--out", traj}, "this writes a memory file, named .mwm"},
		{[]string{"encode", "--model", bundle, "--in", traj, "--out", filepath.Join(dir, "x.txt")}, "this writes a memory file, named .mwm"},
		{[]string{"encode", "--model", bundle, "--in", mem, "--out", symMem}, "is --in " + mem + " (the same file, through a link)"},
		{[]string{"quantize", "--model", bundle, "--in", traj, "--out", traj}, "is --in " + traj + " (the same file)"},
		{[]string{"quantize", "--model", bundle, "--in", traj, "--out", sym}, "is --in " + traj + " (the same file, through a link)"},
		{[]string{"quantize", "--model", bundle, "--in", traj, "--out", hard}, "is --in " + traj + " (the same file, through a link)"},
		{[]string{"quantize", "--model", bundle, "--in", traj, "--out", filepath.Join(dir, "c.mwm")}, "a trajectory file is named .arrow, .parquet or .npy"},
		{[]string{"decode", "--model", bundle, "--in", mem, "--out", mem}, "a trajectory file is named"},
		{[]string{"decode", "--model", bundle, "--in", mem, "--out", filepath.Join(nodir, "d.arrow")}, "folder " + nodir + " does not exist"},
		{[]string{"decode", "--model", bundle, "--in", mem, "--out", filepath.Join(file, "d.arrow")}, file + " is not a folder"},
		{[]string{"fit", "opq", "--in", traj, "--out", filepath.Join(nodir, "c.opq")}, "folder " + nodir + " does not exist"},
		{[]string{"fit", "opq", "--in", traj, "--out", filepath.Join(dir, "c.arrow")}, "this writes a quantizer file, named .opq"},
		{[]string{"fit", "--in", traj, "--out", traj}, "this writes a model bundle, named .mwb"},
		{[]string{"fit", "--in", traj, "--out", filepath.Join(nodir, "x.mwb")}, "does not exist"},
		{[]string{"sim", "--out", filepath.Join(nodir, "s.arrow")}, "folder " + nodir + " does not exist"},
		{[]string{"import", "--out", filepath.Join(dir, "i.mwm"), handwrittenRec}, "a trajectory file is named"},
		{[]string{"model", "init", "--out", bundle}, ".mwb is the extension of a model bundle, not of a weights file"},
		{[]string{"model", "init", "--out", traj}, "is the extension of a trajectory file"},
	}
	for _, c := range cases {
		code, stdout, errs := memowm(t, c.args...)
		if code != 2 || !strings.Contains(errs, c.want) {
			t.Errorf("%v: status %d, stderr %q; want 2 and %q", c.args, code, errs, c.want)
		}
		if strings.Contains(errs, "k-means") || strings.Contains(errs, ".tmp") || stdout != "" {
			t.Errorf("%v: worked before refusing: %s%s", c.args, stdout, errs)
		}
	}
	for p, b := range before {
		if now, _ := os.ReadFile(p); !bytes.Equal(now, b) {
			t.Errorf("%s changed", p)
		}
	}
	if os.Geteuid() != 0 { // root writes anywhere
		ro := filepath.Join(dir, "ro")
		os.Mkdir(ro, 0o555)
		if code, _, errs := memowm(t, "sim", "--out", filepath.Join(ro, "s.arrow")); code != 2 || !strings.Contains(errs, "cannot write in folder "+ro) {
			t.Errorf("a read-only folder: status %d, %q", code, errs)
		}
	}
}

// TestFlagSlips: NaN and infinite float flags are refused; decode --episode
// takes negative episode IDs.
func TestFlagSlips(t *testing.T) {
	dir := t.TempDir()
	traj, bundle := filepath.Join(dir, "t.arrow"), filepath.Join(dir, "b.mwb")
	mustRun(t,
		[]string{"sim", "--episodes", "3", "--steps", "30", "--dim", "32", "--out", traj, "--quiet"},
		[]string{"fit", "--in", traj, "--out", bundle, "--preset", "tiny", "--quiet"},
	)
	for _, c := range [][]string{
		{"encode", "--model", bundle, "--in", traj, "--out", filepath.Join(dir, "n.mwm"), "--min-entropy", "NaN"},
		{"encode", "--model", bundle, "--in", traj, "--out", filepath.Join(dir, "n.mwm"), "--lambda", "nan"},
		{"encode", "--model", bundle, "--in", traj, "--out", filepath.Join(dir, "n.mwm"), "--min-entropy", "+Inf"},
		{"sim", "--out", filepath.Join(dir, "n.arrow"), "--noise", "NaN"},
		{"sim", "--out", filepath.Join(dir, "n.arrow"), "--page-load-rate", "nan"},
	} {
		code, _, errs := memowm(t, c...)
		if code != 2 || !strings.Contains(errs, "want a finite number") {
			t.Errorf("%v: status %d, %q", c, code, errs)
		}
	}
	// Episodes -5, 0 and 7: --episode -5 decodes episode -5 alone.
	r, err := trajectory.Open(traj)
	if err != nil {
		t.Fatal(err)
	}
	neg := filepath.Join(dir, "neg.arrow")
	w, err := trajectory.Create(neg, r.Meta())
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []int64{-5, 0, 7} {
		ep, err := r.Next()
		if err != nil {
			t.Fatal(err)
		}
		ep.ID = id
		if err := w.Write(ep); err != nil {
			t.Fatal(err)
		}
	}
	r.Close()
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	mem, dec := filepath.Join(dir, "neg.mwm"), filepath.Join(dir, "dec.arrow")
	if code, out, errs := memowm(t, "encode", "--model", bundle, "--in", neg, "--out", mem, "--quiet"); code != 0 {
		t.Fatalf("encode: %s%s", out, errs)
	}
	if code, out, errs := memowm(t, "decode", "--model", bundle, "--in", mem, "--out", dec, "--episode", "-5", "--quiet"); code != 0 || !strings.Contains(out, "decoded 1 episode,") {
		t.Fatalf("decode --episode -5: %d %s%s", code, out, errs)
	}
	if eps := readCodes(t, dec); len(eps) != 1 || eps[0].ID != -5 {
		t.Fatalf("decoded %d episodes", len(eps))
	}
	if code, _, errs := memowm(t, "decode", "--model", bundle, "--in", mem, "--out", dec, "--episode", "-1", "--force"); code != 1 || !strings.Contains(errs, mem+" has no episode -1") {
		t.Errorf("decode --episode -1: %d %q", code, errs)
	}
}

// TestInterruptRecord interrupts a terminal recording: the recorder stops
// its session itself, writes nothing and exits 130.
func TestInterruptRecord(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns a recording")
	}
	needTmux(t, "vim")
	dir := t.TempDir()
	out := filepath.Join(dir, "v.arrow")
	code, errs := interruptChild(t, syscall.SIGINT, func(s string) bool { return strings.Contains(s, "record tty: step 20/200") },
		"record", "tty", "--steps", "200", "--out", out, "--", "vim")
	if code != 130 || !strings.Contains(errs, "interrupted") || !strings.Contains(errs, "nothing written") {
		t.Fatalf("status %d; want 130 and a message that says nothing was written:\n%s", code, errs)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("left %s", ents[0].Name())
	}
}

// TestInterruptRecordWeb interrupts a browser recording: nothing is left,
// neither the trajectory nor the recording folder.
func TestInterruptRecordWeb(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns a recording")
	}
	needTool(t, "chromium", func() error { _, err := web.FindChromium(""); return err })
	dir := t.TempDir()
	out := filepath.Join(dir, "w.arrow")
	code, errs := interruptChild(t, syscall.SIGINT, func(s string) bool { return strings.Contains(s, "record web: step 20/200") },
		"record", "web", "--site", webSite, "--steps", "200", "--width", "320", "--height", "200", "--out", out)
	if code != 130 || !strings.Contains(errs, "interrupted") || !strings.Contains(errs, "nothing written") {
		t.Fatalf("status %d; want 130 and a message that says nothing was written:\n%s", code, errs)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("left %s", ents[0].Name())
	}
}

// TestInterruptDemo interrupts a demo while it writes into its scratch
// folder: the folder goes too.
func TestInterruptDemo(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns a demo")
	}
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp) // the demo's scratch folder goes here
	code, errs := interruptChild(t, syscall.SIGINT, func(string) bool {
		m, _ := filepath.Glob(filepath.Join(tmp, "memowm-demo-*", ".demo.arrow.tmp*"))
		return len(m) > 0
	}, "demo", "--episodes", "60")
	if code != 130 || !strings.Contains(errs, "memowm demo: interrupted; removed ") || !strings.Contains(errs, "memowm-demo-") {
		t.Fatalf("status %d, stderr %q", code, errs)
	}
	if ents, _ := os.ReadDir(tmp); len(ents) != 0 {
		t.Errorf("left %s", ents[0].Name())
	}
}

// TestInterruptBench interrupts a bench while a memory file of its rows
// exists: the scratch folder goes.
func TestInterruptBench(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns a bench")
	}
	dir, tmp := t.TempDir(), t.TempDir()
	traj, bundle := filepath.Join(dir, "t.arrow"), filepath.Join(dir, "b.mwb")
	mustRun(t,
		[]string{"sim", "--episodes", "12", "--steps", "30", "--dim", "32", "--out", traj, "--quiet"},
		[]string{"fit", "--in", traj, "--out", bundle, "--preset", "tiny", "--quiet"},
	)
	t.Setenv("TMPDIR", tmp)
	code, errs := interruptChild(t, syscall.SIGINT, func(string) bool {
		m, _ := filepath.Glob(filepath.Join(tmp, "memowm-bench-*", "*.mwm"))
		return len(m) > 0
	}, "bench", "--model", bundle, "--in", traj)
	if code != 130 || !strings.Contains(errs, "memowm bench: interrupted; removed ") {
		t.Fatalf("status %d, stderr %q", code, errs)
	}
	if ents, _ := os.ReadDir(tmp); len(ents) != 0 {
		t.Errorf("left %s", ents[0].Name())
	}
}

// TestInterruptTraining: an interrupt stops fit --stage wm at a step; the
// checkpoint and the bundle so far are kept, the bundle records the run as
// interrupted (so sweep will not reuse it), and the status is 130.
func TestInterruptTraining(t *testing.T) {
	if testing.Short() {
		t.Skip("trains until interrupted")
	}
	dir := t.TempDir()
	traj, out := filepath.Join(dir, "t.arrow"), filepath.Join(dir, "m.mwb")
	if code, _, errs := memowm(t, "sim", "--episodes", "8", "--steps", "12", "--dim", "32", "--out", traj, "--quiet"); code != 0 {
		t.Fatal(errs)
	}
	code, errs := interruptChild(t, syscall.SIGINT, func(s string) bool { return strings.Contains(s, "fit wm: step ") },
		"fit", "--stage", "wm", "--in", traj, "--out", out, "--preset", "tiny", "--steps", "100000")
	// One message says where it stopped and what it kept.
	if code != 130 || strings.Count(errs, "interrupted at step") != 2 || !strings.Contains(errs, "(continue with --resume "+out+".ckpt); bundle "+out) ||
		strings.Contains(errs, "context canceled") {
		t.Fatalf("status %d\n%s", code, errs)
	}
	for _, f := range []string{out, out + ".ckpt"} {
		if _, err := os.Stat(f); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
	}
	if code, o, _ := memowm(t, "inspect", out); code != 0 || !strings.Contains(o, "interrupted at step") {
		t.Fatalf("inspect: %d %s", code, o)
	}
	if len(atomicfile.Leftovers(out)) != 0 {
		t.Fatal("a temporary file is left")
	}

	// Interrupted while it trains a finished bundle on into the same file
	// (as sweep does), it leaves that bundle as it was.
	fin := filepath.Join(dir, "f.mwb")
	if code, _, errs := memowm(t, "fit", "--stage", "wm", "--in", traj, "--out", fin, "--preset", "tiny", "--steps", "3"); code != 0 {
		t.Fatal(errs)
	}
	before, err := os.ReadFile(fin)
	if err != nil {
		t.Fatal(err)
	}
	code, errs = interruptChild(t, syscall.SIGINT, func(s string) bool { return strings.Contains(s, "fit wm: step ") },
		"fit", "--stage", "wm", "--in", traj, "--model", fin, "--out", fin, "--steps", "100000", "--force")
	if code != 130 || !strings.Contains(errs, fin+", a finished model (trained 3 of 3 steps), left as it was") {
		t.Fatalf("continuation: status %d\n%s", code, errs)
	}
	if after, err := os.ReadFile(fin); err != nil || !bytes.Equal(after, before) {
		t.Fatalf("the finished bundle changed (%v)", err)
	}
	if _, err := os.Stat(fin + ".ckpt"); err != nil {
		t.Fatal(err)
	}
}
