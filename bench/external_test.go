package bench

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/memowm/memowm/internal/fixture"
	"github.com/memowm/memowm/model"
	"github.com/memowm/memowm/trajectory"
)

// needExternal skips the test when xz or zstd is not on PATH, or fails it
// with MEMOWM_EXTERNAL=1 (CI installs both).
func needExternal(t *testing.T) {
	t.Helper()
	for _, c := range []string{"xz", "zstd"} {
		if _, err := exec.LookPath(c); err != nil {
			if os.Getenv("MEMOWM_EXTERNAL") == "1" {
				t.Fatalf("MEMOWM_EXTERNAL=1 but %s is not on PATH: %v", c, err)
			}
			t.Skipf("%s is not on PATH (MEMOWM_EXTERNAL=1 makes this a failure)", c)
		}
	}
}

// direct runs name with args as typed in a shell with no option variables
// set: stdin in, or the file path when in is nil.
func direct(t *testing.T, in []byte, name string, args ...string) []byte {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH")}
	if in != nil {
		cmd.Stdin = bytes.NewReader(in)
	}
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s %v: %v", name, args, err)
	}
	return out
}

// repetitive is an episode of 400 states of 64 codes (4 bits) that repeat
// with small changes: where xz -9e's optimal parse and zstd's long
// matching beat a greedy LZMA2 parse.
func repetitive(id int64) *trajectory.Episode {
	ep := &trajectory.Episode{ID: id}
	z := make([]uint8, 64)
	for i := range z {
		z[i] = uint8(i*7+int(id)) % 16
	}
	for t := 0; t < 400; t++ {
		c := append([]uint8(nil), z...)
		c[(t*13)%64] = uint8(t) % 16
		c[(t*29+5)%64] = uint8(t*3) % 16
		ep.Codes = append(ep.Codes, c)
	}
	return ep
}

// TestExternalRows runs the xz and zstd commands' rows on the fixture's
// episodes and on repetitive ones: each stream's bytes are those of the
// command run directly on the same packed bytes (and, for zstd, those it
// writes for a file holding them), the rows ignore XZ_OPT and ZSTD_CLEVEL,
// and best-general is the smallest row, external ones included.
func TestExternalRows(t *testing.T) {
	needExternal(t)
	t.Setenv("XZ_OPT", "--check=none") // 8 bytes less per stream if obeyed
	t.Setenv("ZSTD_CLEVEL", "1")
	s, err := fixture.Get()
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	tools := findExternal(ctx)
	if len(tools) != 2 || !tools[0].Found || !tools[1].Found ||
		!strings.HasPrefix(tools[0].Version, "xz (XZ Utils) ") || !strings.Contains(tools[1].Version, "Zstandard") ||
		strings.Join(tools[0].Rows, ",") != "xz-9e" || strings.Join(tools[1].Rows, ",") != "zstd-19-long,zstd-22-long" {
		t.Fatalf("%+v", tools)
	}
	dir := t.TempDir()
	const actions = 12.5
	for _, eps := range [][]*trajectory.Episode{s.Episodes, {repetitive(1), repetitive(2), repetitive(3)}} {
		rows, err := generalRows(ctx, eps, 4, actions, tools, func(string) {})
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, r := range rows {
			names = append(names, r.Name)
		}
		if strings.Join(names, ",") != "zstd,zstd-long,xz,xz-9e,zstd-19-long,zstd-22-long" {
			t.Fatalf("rows %v", names)
		}
		raw, obs := packEpisodes(eps, 4)
		for i, e := range externalRows {
			total := 0
			for k, b := range raw {
				z := direct(t, b, e.command, e.encArgs(len(b))...)
				if e.sized {
					f := filepath.Join(dir, fmt.Sprintf("ep%d", k))
					if err := os.WriteFile(f, b, 0o644); err != nil {
						t.Fatal(err)
					}
					if zf := direct(t, nil, e.command, append(append([]string(nil), e.enc...), f)...); !bytes.Equal(zf, z) {
						t.Fatalf("%s: %d bytes from stdin with --stream-size, %d from a file", e.row, len(z), len(zf))
					}
				}
				if d := direct(t, z, e.command, e.dec...); !bytes.Equal(d, b) {
					t.Fatalf("%s: episode %d does not decode back", e.row, k)
				}
				total += len(z)
			}
			r := rows[3+i]
			want := float64(total*8)/float64(obs) + actions
			if r.BitsPerObs != want || r.IdealBitsPerObs != want || r.ActionBitsPerObs != actions ||
				!strings.HasSuffix(r.Note, fmt.Sprintf("; %d bytes for %d episodes", total, len(raw))) || r.EncodeObsPerS <= 0 || r.DecodeObsPerS <= 0 {
				t.Fatalf("%s: %+v; the command directly: %d bytes, %.3f bits/obs", e.row, r, total, want)
			}
		}
		best := bestGeneral(rows)
		least := rows[0]
		for _, r := range rows {
			if r.BitsPerObs < least.BitsPerObs {
				least = r
			}
		}
		if best.BitsPerObs != least.BitsPerObs || !strings.HasPrefix(best.Note, least.Name+",") {
			t.Fatalf("best-general %s (%.2f), smallest %s (%.2f)", best.Note, best.BitsPerObs, least.Name, least.BitsPerObs)
		}
		for _, r := range rows {
			t.Logf("%s %.2f bits/obs", r.Name, r.BitsPerObs)
		}
		// On the repetitive episodes a command is smallest (zstd 1.5.4: 16.4
		// bits/obs against 17.3 in process), so best-general must be
		// external: it would not be if it looked at the in-process rows
		// alone.
		if eps[0].ID == 1 && !slices.Contains([]string{"xz-9e", "zstd-19-long", "zstd-22-long"}, least.Name) {
			t.Fatalf("on the repetitive episodes an in-process row is the smallest: %s", best.Note)
		}
	}
}

// TestExternalRoundTripFails: an external row whose stream does not
// decode back to the episode fails the bench with the row's name.
func TestExternalRoundTripFails(t *testing.T) {
	needExternal(t)
	ctx := context.Background()
	cs := externalCompressors(ctx, findExternal(ctx))
	if len(cs) != 3 {
		t.Fatalf("%d external rows", len(cs))
	}
	c := cs[0]
	c.dec = c.enc // compresses again instead of decompressing
	ep := &trajectory.Episode{ID: 5}
	if _, err := generalRow(c, []*trajectory.Episode{ep}, [][]byte{{1, 2, 3}}, 1, 0); err == nil || !strings.HasPrefix(err.Error(), "bench: xz-9e round trip of episode 5 failed") {
		t.Fatalf("%v", err)
	}
	// A command that fails says so, with its stderr.
	c = cs[1]
	c.enc = func(b []byte) ([]byte, error) { return runCommand(ctx, "zstd", []string{"-dc"}, b) }
	if _, err := generalRow(c, []*trajectory.Episode{ep}, [][]byte{{1, 2, 3}}, 1, 0); err == nil || !strings.HasPrefix(err.Error(), "bench: zstd-19-long on episode 5: 'zstd -dc': exit status 1: ") {
		t.Fatalf("%v", err)
	}
	// A cancelled context stops the commands.
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := runCommand(cctx, "xz", []string{"-9e", "-c", "-T1"}, []byte{1}); err == nil {
		t.Fatal("ran under a cancelled context")
	}
}

// TestRunExternal: Run with External reports the commands it ran, with
// their versions, adds their rows after the in-process ones, and
// best-general and every ratio count them.
func TestRunExternal(t *testing.T) {
	needExternal(t)
	s, err := fixture.Get()
	if err != nil {
		t.Fatal(err)
	}
	b, p, err := fixture.Bundle(1, model.Policy{Kind: model.KeepAll})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Run(b, p, s.Episodes, Options{Batch: 4, Dir: t.TempDir(), External: true})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, m := range rep.Methods[:8] {
		names = append(names, m.Name)
	}
	if strings.Join(names, ",") != "fixed-width,zstd,zstd-long,xz,xz-9e,zstd-19-long,zstd-22-long,best-general" {
		t.Fatalf("rows %v", names)
	}
	if len(rep.External) != 2 || !rep.External[0].Found || !rep.External[1].Found || rep.External[0].Path == "" || rep.External[1].Version == "" {
		t.Fatalf("%+v", rep.External)
	}
	checkGeneral(t, rep)
}

// TestRunExternalMissing: with neither command on PATH (and a zstd that
// does not run) Run still works, without their rows, and says why.
func TestRunExternalMissing(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "zstd"), []byte("#!/bin/sh\necho broken >&2\nexit 3\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir)
	s, err := fixture.Get()
	if err != nil {
		t.Fatal(err)
	}
	b, p, err := fixture.Bundle(1, model.Policy{Kind: model.KeepAll})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Run(b, p, s.Episodes, Options{Batch: 4, Dir: t.TempDir(), External: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range rep.Methods {
		if strings.HasPrefix(m.Name, "xz-") || strings.HasPrefix(m.Name, "zstd-") && m.Name != "zstd-long" {
			t.Fatalf("row %s without its command", m.Name)
		}
	}
	x := rep.External
	if len(x) != 2 || x[0].Found || x[0].Note != "not found on PATH" || strings.Join(x[0].Rows, ",") != "xz-9e" ||
		x[1].Found || !strings.Contains(x[1].Note, "exit status 3: broken") || strings.Join(x[1].Rows, ",") != "zstd-19-long,zstd-22-long" {
		t.Fatalf("%+v", x)
	}
	checkGeneral(t, rep)
	// Without External nothing is looked for.
	rep, err = Run(b, p, s.Episodes, Options{Batch: 4, Dir: t.TempDir()})
	if err != nil || rep.External != nil {
		t.Fatalf("%v %+v", err, rep)
	}
}
