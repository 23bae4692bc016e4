package main

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDamagedParquetThroughVerbs: a bit flipped anywhere in a Parquet
// file's footer never makes a verb succeed on fewer episodes than the file
// holds (a damaged footer used to end the read early as if the file ended:
// exit 0 with 6 of 8 episodes, or none).
func TestDamagedParquetThroughVerbs(t *testing.T) {
	dir := t.TempDir()
	p := func(n string) string { return filepath.Join(dir, n) }
	mustRun(t,
		[]string{"sim", "--episodes", "8", "--steps", "9", "--dim", "32", "--out", p("t.parquet"), "--quiet"},
		[]string{"fit", "opq", "--in", p("t.parquet"), "--out", p("q.opq"), "--quiet"},
		[]string{"fit", "--in", p("t.parquet"), "--opq", p("q.opq"), "--out", p("b.mwb"), "--preset", "tiny", "--quiet"},
	)
	good, err := os.ReadFile(p("t.parquet"))
	if err != nil {
		t.Fatal(err)
	}
	// The footer: its Thrift metadata, its length and the magic.
	n := int(binary.LittleEndian.Uint32(good[len(good)-8:])) + 8
	if n <= 8 || n > len(good) {
		t.Fatalf("footer of %d bytes in a file of %d", n, len(good))
	}
	bad := p("bad.parquet")
	// About 160 flips spread over the footer through quantize (the
	// trajectory package's own test flips every bit), every tenth also
	// through encode.
	step := n/160 + 1
	if testing.Short() {
		step *= 4
	}
	silent := 0
	for i := len(good) - n; i < len(good); i += step {
		d := append([]byte(nil), good...)
		d[i] ^= 1 << (i % 8)
		if err := os.WriteFile(bad, d, 0o644); err != nil {
			t.Fatal(err)
		}
		verbs := [][]string{{"quantize", "--opq", p("q.opq"), "--in", bad, "--out", p("c.arrow"), "--force", "--measure=false"}}
		if (i-(len(good)-n))%(10*step) == 0 {
			verbs = append(verbs, []string{"encode", "--model", p("b.mwb"), "--in", bad, "--out", p("m.mwm"), "--force", "--lambda", "0", "--batch", "8", "--measure=false"})
		}
		for _, v := range verbs {
			code, out, errs := memowm(t, v...)
			if code == 0 && !strings.Contains(out, "8 episodes") {
				silent++
				t.Errorf("byte %d (footer byte %d of %d), bit %d: %s exits 0 with\n%s%s", i, i-(len(good)-n), n, i%8, v[0], out, errs)
			}
		}
		if silent > 3 {
			t.FailNow()
		}
	}
}
