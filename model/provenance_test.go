package model

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestProvenanceOutsideIdentity: the training time and host do not change a
// bundle's bytes (two runs that differ only in them give the same bundle);
// Save writes them to the sidecar, bound to the bundle's hash, and Load
// reads them back; Read, a sidecar of another bundle and a damaged one leave
// them unrecorded.
func TestProvenanceOutsideIdentity(t *testing.T) {
	dir := t.TempDir()
	rec := func(sec float64, host string) *Bundle {
		b := microBundle(t)
		b.Training = &Training{Steps: 5, TargetSteps: 5, PriorSteps: 3, LR: 1e-3, Seconds: sec, PriorSeconds: 2 * sec, Host: host}
		return b
	}
	a, b := rec(12.5, "alpha"), rec(99.25, "beta")
	da, err := a.Bytes()
	if err != nil {
		t.Fatal(err)
	}
	db, err := b.Bytes()
	if err != nil {
		t.Fatal(err)
	}
	plain := rec(0, "")
	dp, _ := plain.Bytes()
	if !bytes.Equal(da, db) || !bytes.Equal(da, dp) || a.HashString() != b.HashString() {
		t.Fatalf("the training time or host changes the bundle: %s, %s", a.HashString(), b.HashString())
	}
	if bytes.Contains(da, []byte("seconds")) || bytes.Contains(da, []byte("alpha")) {
		t.Fatal("the bundle's bytes hold the time or the host")
	}

	pa, pb := filepath.Join(dir, "a.mwb"), filepath.Join(dir, "b.mwb")
	if err := a.Save(pa); err != nil {
		t.Fatal(err)
	}
	if err := b.Save(pb); err != nil {
		t.Fatal(err)
	}
	fa, _ := os.ReadFile(pa)
	fb, _ := os.ReadFile(pb)
	if !bytes.Equal(fa, fb) || !bytes.Equal(fa, da) {
		t.Fatal("the saved bundles differ")
	}
	la, err := Load(pa)
	if err != nil {
		t.Fatal(err)
	}
	if *la.Training != *a.Training || la.HashString() != a.HashString() {
		t.Fatalf("loaded %+v, saved %+v", la.Training, a.Training)
	}
	if sec, ok := la.Training.TotalSeconds(); !ok || sec != 37.5 {
		t.Fatalf("total seconds %g %v", sec, ok)
	}
	r, err := Read(bytes.NewReader(fa))
	if err != nil || r.Training.Seconds != 0 || r.Training.Host != "" {
		t.Fatalf("read from a stream: %+v %v", r.Training, err)
	}

	// A sidecar of another bundle (here b's beside a bundle written over
	// it), or a damaged one, is no record of this bundle.
	other := microBundle(t)
	other.Training = &Training{Steps: 7, TargetSteps: 7}
	if err := other.Save(pb); err != nil { // no time: the old sidecar stays
		t.Fatal(err)
	}
	if lo, err := Load(pb); err != nil || lo.Training.Seconds != 0 || lo.Training.Host != "" || lo.Training.Steps != 7 {
		t.Fatalf("a bundle beside another's sidecar: %+v %v", lo.Training, err)
	}
	for _, bad := range []string{"{", `{"bundle_sha256":"` + a.HashString() + `","seconds":-4}`, strings.Repeat(" ", maxProvenance+1)} {
		if err := os.WriteFile(ProvenancePath(pa), []byte(bad), 0o644); err != nil {
			t.Fatal(err)
		}
		if l, err := Load(pa); err != nil || l.Training.Seconds != 0 || l.Training.Steps != 5 {
			t.Fatalf("damaged sidecar %.20q: %+v %v", bad, l.Training, err)
		}
	}
}

// TestLegacySeconds: a bundle written when the header held the training
// time still reads, keeps its time (no sidecar consulted) and writes back to
// the same bytes and hash; a new bundle made from its record puts the time
// in the sidecar instead.
func TestLegacySeconds(t *testing.T) {
	old := microBundle(t)
	old.Training = &Training{Steps: 5, TargetSteps: 5, Seconds: 3.5}
	old.legacySeconds = true // what Bytes wrote before the sidecar
	data, err := old.Bytes()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(data, []byte(`"seconds":3.5`)) {
		t.Fatal("the legacy header does not hold the time")
	}
	path := filepath.Join(t.TempDir(), "old.mwb")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	b, err := Load(path)
	if err != nil || b.Training.Seconds != 3.5 || b.HashString() != old.HashString() {
		t.Fatalf("legacy bundle: %+v %v", b.Training, err)
	}
	again, err := b.Bytes()
	if err != nil || !bytes.Equal(again, data) {
		t.Fatalf("the legacy bundle does not write back to its bytes: %v", err)
	}
	if err := b.Save(path); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(ProvenancePath(path)); !os.IsNotExist(err) {
		t.Fatalf("a legacy bundle wrote a sidecar: %v", err)
	}
	nb := &Bundle{OPQ: b.OPQ, Model: b.Model, Profile: b.Profile, Precision: b.Precision, Policy: b.Policy, Training: b.Training}
	nd, err := nb.Bytes()
	if err != nil || bytes.Contains(nd, []byte("seconds")) {
		t.Fatalf("a new bundle from a legacy record holds its time: %v", err)
	}
}
