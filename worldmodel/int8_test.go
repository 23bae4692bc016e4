package worldmodel

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/memowm/memowm/entropy"
)

// int8Fixture is the tiny model (seed 21) in the int8 profile, calibrated
// on 8 random histories, and a batch of histories of 1, 5, 9 and 16 steps.
func int8Fixture(t testing.TB) (*Int8Model, []History) {
	t.Helper()
	m := tinyModel(t, 21)
	c := m.Config()
	rng := rand.New(rand.NewPCG(21, 8))
	var calib []History
	for i := 0; i < 8; i++ {
		calib = append(calib, randomHistory(rng, &c, 1+rng.IntN(c.MaxHistory)))
	}
	q, err := CalibrateInt8(m, calib, 2)
	if err != nil {
		t.Fatal(err)
	}
	hs := []History{randomHistory(rng, &c, 1), randomHistory(rng, &c, 5), randomHistory(rng, &c, 9), randomHistory(rng, &c, c.MaxHistory)}
	return q, hs
}

func predictInt8(t testing.TB, q *Int8Model, hs []History, opts ...Option) []Prediction {
	t.Helper()
	r, err := NewInt8CPU(q, opts...)
	if err != nil {
		t.Fatal(err)
	}
	p, err := r.Predict(nil, hs)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func digestPreds(ps []Prediction) string {
	h := sha256.New()
	for _, p := range ps {
		binary.Write(h, binary.LittleEndian, p.Freq)
		h.Write(p.Mode)
		binary.Write(h, binary.LittleEndian, p.Entropy)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// TestInt8Exact: the int8 profile's tables do not depend on threads, on
// batch composition, or on the SIMD kernels (AVX-512 softmax and
// requantisation against the Go loops); every table is valid.
func TestInt8Exact(t *testing.T) {
	q, hs := int8Fixture(t)
	c := q.Config()
	want := predictInt8(t, q, hs, WithThreads(1))
	ref := digestPreds(want)
	for _, th := range []int{2, 3, 8} {
		if got := digestPreds(predictInt8(t, q, hs, WithThreads(th))); got != ref {
			t.Errorf("threads %d: predictions differ from 1 thread's", th)
		}
	}
	for i, h := range hs {
		if got := digestPreds(predictInt8(t, q, []History{h}, WithThreads(2))); got != digestPreds(want[i:i+1]) {
			t.Errorf("history %d alone: its prediction differs from the batch's", i)
		}
	}
	if softmaxAVX512 || requantAVX512 || lnKernel || pvVNNI {
		s, r, l, v := softmaxAVX512, requantAVX512, lnKernel, pvVNNI
		softmaxAVX512, requantAVX512, lnKernel, pvVNNI = false, false, false, false
		got := digestPreds(predictInt8(t, q, hs, WithThreads(2)))
		softmaxAVX512, requantAVX512, lnKernel, pvVNNI = s, r, l, v
		if got != ref {
			t.Error("the Go softmax, requantisation, LayerNorm and value sums give other predictions than the AVX-512 kernels")
		}
	}
	J, C := c.Coords(), c.Codewords
	for b, p := range want {
		for j := 0; j < J; j++ {
			f := p.Freq[j*C : (j+1)*C]
			var tot uint64
			for _, v := range f {
				if v == 0 {
					t.Fatalf("history %d coordinate %d: a zero frequency", b, j)
				}
				tot += uint64(v)
			}
			if tot != 1<<DefaultPrecision || int(p.Mode[j]) != entropy.Mode(f) || p.Entropy[j] != entropy.EntropyQ16(f) {
				t.Fatalf("history %d coordinate %d: total %d, mode %d, entropy %d", b, j, tot, p.Mode[j], p.Entropy[j])
			}
		}
	}
}

// TestInt8NearF32 bounds what the integer arithmetic costs: the mean
// Kullback-Leibler divergence from the f32 profile's distribution to the
// int8 table, in bits per coordinate, on the fixture's batch.
func TestInt8NearF32(t *testing.T) {
	q, hs := int8Fixture(t)
	c := q.Config()
	r := newCPU(t, q.Model())
	outs, err := r.Forward(nil, hs)
	if err != nil {
		t.Fatal(err)
	}
	preds := predictInt8(t, q, hs)
	J, C := c.Coords(), c.Codewords
	var kl, ent float64
	var probs []float32
	for b := range hs {
		for j := 0; j < J; j++ {
			probs = outs[b].ProbsTo(probs, j)
			f := preds[b].Freq[j*C : (j+1)*C]
			for cw, p := range probs {
				if p > 0 {
					qv := float64(f[cw]) / (1 << DefaultPrecision)
					kl += float64(p) * math.Log2(float64(p)/qv)
					ent -= float64(p) * math.Log2(float64(p))
				}
			}
		}
	}
	n := float64(len(hs) * J)
	t.Logf("KL(f32 || int8) = %.5f bits per coordinate (f32 entropy %.3f)", kl/n, ent/n)
	if kl/n > 0.01*ent/n {
		t.Errorf("KL(f32 || int8) = %.5f bits per coordinate is more than 1%% of the entropy %.3f", kl/n, ent/n)
	}
}

// TestInt8Golden pins the int8 profile's tables for the fixture: the same
// bits on every architecture (scripts/cross-arm64.sh runs it under qemu)
// and with -tags purego. The calibration runs the f32 profile, whose bits
// are pinned by TestGolden, so the int8 network is the same everywhere too.
func TestInt8Golden(t *testing.T) {
	q, hs := int8Fixture(t)
	var net bytes.Buffer
	if _, err := q.WriteTo(&net); err != nil {
		t.Fatal(err)
	}
	ns := sha256.Sum256(net.Bytes())
	got := "network " + hex.EncodeToString(ns[:]) + "\ntables " + digestPreds(predictInt8(t, q, hs)) + "\n"
	path := filepath.Join("testdata", "golden_int8.txt")
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if got != string(want) {
		t.Errorf("int8 golden values changed:\n got %s\nwant %s", got, want)
	}
}

// TestInt8File: the network reads back to the same bytes and predictions;
// damaged files are errors, never a panic or another network.
func TestInt8File(t *testing.T) {
	q, hs := int8Fixture(t)
	var buf bytes.Buffer
	if _, err := q.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	data := buf.Bytes()
	q2, err := ReadInt8(bytes.NewReader(data), q.Model())
	if err != nil {
		t.Fatal(err)
	}
	var buf2 bytes.Buffer
	q2.WriteTo(&buf2)
	if !bytes.Equal(buf2.Bytes(), data) {
		t.Fatal("the network does not write back to the same bytes")
	}
	if digestPreds(predictInt8(t, q2, hs)) != digestPreds(predictInt8(t, q, hs)) {
		t.Fatal("the network read back predicts otherwise")
	}
	rng := rand.New(rand.NewPCG(7, 7))
	for i := 0; i < 300; i++ {
		d := slices.Clone(data)
		switch i % 3 {
		case 0:
			d = d[:rng.IntN(len(d))]
		case 1:
			k := rng.IntN(len(d))
			d[k] ^= 1 << rng.IntN(8)
		case 2:
			d = append(d, 0)
		}
		_, err := ReadInt8(bytes.NewReader(d), q.Model())
		if err == nil {
			t.Fatalf("case %d: damaged network read without error", i)
		}
		if !errors.Is(err, ErrFormat) && !errors.Is(err, ErrChecksum) {
			t.Fatalf("case %d: %v does not wrap ErrFormat or ErrChecksum", i, err)
		}
	}
	// A valid checksum over an out-of-range value is refused by the checks.
	d := slices.Clone(data)
	d[len(int8Magic)+4] = 99 // frac
	binary.LittleEndian.PutUint32(d[len(d)-4:], crcOf(d[:len(d)-4]))
	if _, err := ReadInt8(bytes.NewReader(d), q.Model()); err == nil || !strings.Contains(err.Error(), "residual fraction") {
		t.Fatalf("frac 99: %v", err)
	}
}

func crcOf(b []byte) uint32 { return crc32Castagnoli(b) }

// FuzzReadInt8: any bytes read as an int8 network are an error or a network
// that writes back to the same bytes; never a panic.
func FuzzReadInt8(f *testing.F) {
	q, _ := int8Fixture(f)
	var buf bytes.Buffer
	q.WriteTo(&buf)
	data := buf.Bytes()
	f.Add(data)
	f.Add(data[:len(data)/2])
	f.Add([]byte(int8Magic))
	f.Fuzz(func(t *testing.T, d []byte) {
		got, err := ReadInt8(bytes.NewReader(d), q.Model())
		if err != nil {
			return
		}
		var out bytes.Buffer
		got.WriteTo(&out)
		if !bytes.Equal(out.Bytes(), d) {
			t.Fatal("a network read without error writes other bytes")
		}
	})
}
