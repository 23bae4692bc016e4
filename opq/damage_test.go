package opq

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"os"
	"strings"
	"testing"
)

// outcome classifies what Read made of a damaged copy of a file.
type outcome int

const (
	outError     outcome = iota // an error wrapping ErrFormat: what must happen
	outIdentical                // accepted, and the same quantizer (the same bytes)
	outDifferent                // accepted, a different quantizer: silent corruption
	outPanic                    // Read panicked
	outBadError                 // an error that does not wrap ErrFormat
)

var outcomeNames = [...]string{"error", "identical", "different", "panic", "error without ErrFormat"}

func readOutcome(t *testing.T, d, want []byte) (o outcome, detail string) {
	defer func() {
		if r := recover(); r != nil {
			o, detail = outPanic, fmt.Sprint(r)
		}
	}()
	q, err := Read(bytes.NewReader(d))
	switch {
	case err != nil && errors.Is(err, ErrFormat) && strings.HasPrefix(err.Error(), "opq: "):
		return outError, ""
	case err != nil:
		return outBadError, err.Error()
	}
	if bytes.Equal(fileBytes(t, q), want) {
		return outIdentical, ""
	}
	return outDifferent, "accepted"
}

// damage flips one bit every flipStride bits and cuts the file at every
// cutStride bytes, counting the outcomes; anything but an error fails t.
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
		o, detail := readOutcome(t, d, data)
		note(o, fmt.Sprintf("bit %d flipped", bit), detail)
	}
	for n := 0; n < len(data); n += cutStride {
		o, detail := readOutcome(t, data[:n], data)
		note(o, fmt.Sprintf("cut to %d bytes", n), detail)
	}
	return counts
}

// TestQuantizerBitFlips: bits flipped at a stride (every bit position of a
// byte in turn) and cuts at a stride are errors, never a panic or a
// quantizer accepted. TestReadDamaged and TestReadTruncated add one flip per
// byte and every cut.
func TestQuantizerBitFlips(t *testing.T) {
	stride := 3
	if testing.Short() {
		stride = 29
	}
	damage(t, smallFile(t), stride, stride)
}

// TestQuantizerCampaign flips every bit of a small quantizer file and cuts
// it at every length, and prints the outcomes. It runs with
// MEMOWM_CAMPAIGN=1:
//
//	MEMOWM_CAMPAIGN=1 go test ./opq -run TestQuantizerCampaign -v
func TestQuantizerCampaign(t *testing.T) {
	if os.Getenv("MEMOWM_CAMPAIGN") == "" {
		t.Skip("set MEMOWM_CAMPAIGN=1 to flip every bit of a quantizer file")
	}
	data := smallFile(t)
	counts := damage(t, data, 1, 1)
	var b strings.Builder
	for o, n := range counts {
		fmt.Fprintf(&b, " %s %d;", outcomeNames[o], n)
	}
	t.Logf("quantizer file of %d bytes, %d bit flips and %d cuts (every bit, every length):%s", len(data), 8*len(data), len(data), b.String())
}

// TestReadHeldOutFields: the held-out fields (reserved and zero before) are
// checked even under a valid checksum.
func TestReadHeldOutFields(t *testing.T) {
	b := smallFile(t)
	at := len(Magic) + headerSize - 16
	for _, c := range []struct {
		states uint64
		r2     float64
	}{{0, 0.5}, {10, math.NaN()}, {10, math.Inf(-1)}, {10, 1.5}, {1 << 41, 0.5}} {
		d := bytes.Clone(b)
		binary.LittleEndian.PutUint64(d[at:], c.states)
		binary.LittleEndian.PutUint64(d[at+8:], math.Float64bits(c.r2))
		if _, err := Read(bytes.NewReader(reseal(d))); !errors.Is(err, ErrFormat) || !strings.Contains(err.Error(), "held-out R^2") {
			t.Errorf("%d states, R^2 %g: %v", c.states, c.r2, err)
		}
	}
	d := bytes.Clone(b)
	binary.LittleEndian.PutUint64(d[at:], 7)
	binary.LittleEndian.PutUint64(d[at+8:], math.Float64bits(-0.25))
	q, err := Read(bytes.NewReader(reseal(d)))
	if r2, n, ok := q.HeldOut(); err != nil || r2 != -0.25 || n != 7 || !ok {
		t.Fatalf("a negative held-out R^2 is a measure like any other: %v", err)
	}
}
