package model

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"strings"
	"testing"

	"github.com/memowm/memowm/internal/fuzzdamage"
	"github.com/memowm/memowm/opq"
	"github.com/memowm/memowm/trajectory"
	"github.com/memowm/memowm/worldmodel"
)

// microBundle is the smallest bundle that exercises every part of the
// format: a quantizer of 1 slot x 4 channels (2 subspaces, 2 codewords), a
// world model of 363 parameters, a risk policy and a training record. About
// 2.3 KB, so fuzzers and bit-flip campaigns run fast.
func microBundle(t testing.TB) *Bundle {
	t.Helper()
	shape := trajectory.Shape{Slots: 1, Dim: 4, Codes: 2}
	rng := rand.New(rand.NewPCG(1, 1))
	states := make([][]float32, 8)
	for i := range states {
		states[i] = make([]float32, shape.StateLen())
		for j := range states[i] {
			states[i][j] = float32(rng.NormFloat64())
		}
	}
	ocfg := opq.DefaultConfig()
	ocfg.Shape, ocfg.Codewords, ocfg.Workers = shape, 2, 1
	q, err := opq.Fit(states, ocfg)
	if err != nil {
		t.Fatal(err)
	}
	cfg := worldmodel.Config{
		Profile: worldmodel.ProfileF32, MaxHistory: 1, Slots: 1, Subspaces: 2, Codewords: 2, CodeDim: 1,
		Layers: 1, Heads: 1, MLP: 1, ActionTypes: 1, CoordBins: 1, ActionDim: 1, ByteDim: 1,
		PayloadHidden: 1, MaxPayload: 1, Tasks: 1,
	}
	m, err := worldmodel.New(cfg, 1)
	if err != nil {
		t.Fatal(err)
	}
	p := Policy{Kind: Risk, LambdaQ32: 1 << 30, BinQ16: 16384, BinRate: []int32{100, -1, 3000},
		Marginal: []uint32{1, 2}, Impact: []uint64{5 << 20, 6 << 20}}
	return &Bundle{OPQ: q, Model: m, Profile: worldmodel.ProfileF32, Precision: 16, Policy: p,
		Training: &Training{Steps: 40, TargetSteps: 100, Interrupted: true}}
}

// resealBundle recomputes the checksum of a modified bundle.
func resealBundle(b []byte) []byte {
	b = bytes.Clone(b)
	fuzzdamage.Reseal(b)
	return b
}

// outcome classifies what Read made of a damaged copy of want.
type outcome int

const (
	outError     outcome = iota // an error wrapping ErrFormat: what must happen
	outIdentical                // accepted, and the same bundle (the same bytes)
	outDifferent                // accepted, a different bundle: silent corruption
	outPanic                    // Read panicked
	outBadError                 // an error that does not wrap ErrFormat
)

var outcomeNames = [...]string{"error", "identical", "different", "panic", "error without ErrFormat"}

func readOutcome(d, want []byte) (o outcome, detail string) {
	defer func() {
		if r := recover(); r != nil {
			o, detail = outPanic, fmt.Sprint(r)
		}
	}()
	b, err := Read(bytes.NewReader(d))
	switch {
	case err != nil && errors.Is(err, ErrFormat) && strings.HasPrefix(err.Error(), "model: "):
		return outError, ""
	case err != nil:
		return outBadError, err.Error()
	}
	got, err := b.Bytes()
	if err == nil && bytes.Equal(got, want) {
		return outIdentical, ""
	}
	return outDifferent, fmt.Sprintf("accepted as %s", b.HashString())
}

// damage flips one bit every flipStride bits and cuts the file at every
// cutStride bytes (and at the last few), counting the outcomes.
func damage(t *testing.T, data []byte, flipStride, cutStride int) (counts [len(outcomeNames)]int) {
	t.Helper()
	note := func(o outcome, what, detail string) {
		counts[o]++
		if o != outError && counts[o] <= 5 {
			t.Errorf("%s: %s %s", what, outcomeNames[o], detail)
		}
	}
	for bit := 0; bit < 8*len(data); bit += flipStride {
		d := bytes.Clone(data)
		d[bit/8] ^= 1 << (bit % 8)
		o, detail := readOutcome(d, data)
		note(o, fmt.Sprintf("bit %d flipped", bit), detail)
	}
	for n := 0; n < len(data); n += cutStride {
		o, detail := readOutcome(data[:n], data)
		note(o, fmt.Sprintf("cut to %d bytes", n), detail)
	}
	for n := max(0, len(data)-9); n < len(data) && cutStride > 1; n++ {
		o, detail := readOutcome(data[:n], data)
		note(o, fmt.Sprintf("cut to %d bytes", n), detail)
	}
	return counts
}

// TestBundleBitFlips: a bit flipped at a stride through a small bundle, or
// the bundle cut at a stride, is an error every time: never a panic, never
// a bundle accepted.
func TestBundleBitFlips(t *testing.T) {
	data, err := microBundle(t).Bytes()
	if err != nil {
		t.Fatal(err)
	}
	flip, cut := 97, 13
	if testing.Short() {
		flip, cut = 997, 101
	}
	damage(t, data, flip, cut)
}

// TestBundleCampaign flips every bit of a small bundle and cuts it at every
// length, and prints the outcomes. It runs with MEMOWM_CAMPAIGN=1:
//
//	MEMOWM_CAMPAIGN=1 go test ./model -run TestBundleCampaign -v
func TestBundleCampaign(t *testing.T) {
	if os.Getenv("MEMOWM_CAMPAIGN") == "" {
		t.Skip("set MEMOWM_CAMPAIGN=1 to flip every bit of a bundle")
	}
	data, err := microBundle(t).Bytes()
	if err != nil {
		t.Fatal(err)
	}
	counts := damage(t, data, 1, 1)
	var b strings.Builder
	for o, n := range counts {
		fmt.Fprintf(&b, " %s %d;", outcomeNames[o], n)
	}
	t.Logf("bundle of %d bytes, %d bit flips and %d cuts (every bit, every length):%s", len(data), 8*len(data), len(data), b.String())
}

func TestMicroBundleRoundTrip(t *testing.T) {
	b := microBundle(t)
	data, err := b.Bytes()
	if err != nil {
		t.Fatal(err)
	}
	r, err := Read(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	if *r.Training != *b.Training || r.Hash() != b.Hash() {
		t.Fatalf("training %+v after the round trip", r.Training)
	}
	// A stream whose length Read cannot know reads the same.
	if r, err := Read(io.MultiReader(bytes.NewReader(data))); err != nil || r.Hash() != b.Hash() {
		t.Fatalf("stream: %v", err)
	}
}

// TestBundleLimits: lengths that the file cannot hold are refused before
// anything is allocated, with the file named when it is loaded.
func TestBundleLimits(t *testing.T) {
	data, err := microBundle(t).Bytes()
	if err != nil {
		t.Fatal(err)
	}
	hlen := int(binary.LittleEndian.Uint32(data[len(Magic)+4:]))
	opqLen := len(Magic) + 8 + hlen // offset of the quantizer's length
	edit := func(at int, v uint64, width int) []byte {
		d := bytes.Clone(data)
		if width == 4 {
			binary.LittleEndian.PutUint32(d[at:], uint32(v))
		} else {
			binary.LittleEndian.PutUint64(d[at:], v)
		}
		return resealBundle(d)
	}
	cases := []struct {
		name   string
		d      []byte
		stream bool // read through a reader of unknown length
		want   string
	}{
		{"header length", edit(len(Magic)+4, 1<<20, 4), false, "a header of 1048576 bytes needs 1048604 more bytes, only"},
		{"header too long", edit(len(Magic)+4, 1<<20+1, 4), true, "header of 1048577 bytes is longer than 1048576"},
		{"part length", edit(opqLen, 1<<31, 8), false, "the quantizer's length 2147483648 needs 2147483668 more bytes, only"},
		{"part too long", edit(opqLen, 1<<40, 8), true, "the quantizer's length 1099511627776 is more than 4294967296"},
	}
	for _, c := range cases {
		var r io.Reader = bytes.NewReader(c.d)
		if c.stream {
			r = io.MultiReader(r)
		}
		if _, err := Read(r); !errors.Is(err, ErrFormat) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
	// Load knows the file's size; its errors name the file.
	path := t.TempDir() + "/cut.mwb"
	if err := os.WriteFile(path, data[:len(data)/2], 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = Load(path)
	if !errors.Is(err, ErrFormat) || !errors.Is(err, io.ErrUnexpectedEOF) || !strings.HasPrefix(err.Error(), "model: "+path+": ") {
		t.Errorf("truncated file: %v", err)
	}
}
