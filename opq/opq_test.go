package opq

import (
	"bytes"
	"errors"
	"math"
	"math/rand/v2"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/memowm/memowm/trajectory"
)

func TestFileRoundTrip(t *testing.T) {
	for _, shared := range []bool{false, true} {
		cfg := smallConfig()
		cfg.Shared, cfg.Rounds = shared, 1
		q := mustFit(t, synth(300, small, 1), cfg)
		b := fileBytes(t, q)
		r, err := Read(bytes.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(fileBytes(t, r), b) {
			t.Fatal("write, read, write changed the bytes")
		}
		if r.Info() != q.Info() || r.Shape() != q.Shape() || r.Shared() != shared || r.Books() != q.Books() {
			t.Fatalf("read %+v, wrote %+v", r.Info(), q.Info())
		}
		for _, a := range [][2][]float32{{q.mean, r.mean}, {q.std, r.std}, {q.rot, r.rot}, {q.books, r.books}, {q.norms, r.norms}, {q.rotT, r.rotT}} {
			if !equalBits(a[0], a[1]) {
				t.Fatal("an array changed in the round trip")
			}
		}
		path := filepath.Join(t.TempDir(), "q.opq")
		if err := q.Save(path); err != nil {
			t.Fatal(err)
		}
		l, err := Load(path)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(fileBytes(t, l), b) || !IsFile(path) {
			t.Fatal("Save and Load changed the bytes")
		}
		matches, _ := filepath.Glob(filepath.Join(filepath.Dir(path), ".*tmp*"))
		if len(matches) != 0 {
			t.Fatalf("Save left temporary files: %v", matches)
		}
	}
}

func equalBits(a, b []float32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if math.Float32bits(a[i]) != math.Float32bits(b[i]) {
			return false
		}
	}
	return true
}

func TestEncodeCodewordGivesItsIndex(t *testing.T) {
	q := mustFit(t, synth(400, small, 2), smallConfig())
	k, sd := q.Codewords(), q.SubDim()
	dots := make([]float32, k)
	code := make([]uint8, 1)
	distinct := 0
	for b := 0; b < q.Books(); b++ {
		for c := 0; c < k; c++ {
			cw := q.Codeword(b, c)
			nearest(code, 1, nil, cw, sd, 1, sd, q.booksT[b*k*sd:(b+1)*k*sd], q.norms[b*k:(b+1)*k], dots)
			// The answer is c, or an identical codeword of lower index.
			got := int(code[0])
			if got != c && !equalBits(q.Codeword(b, got), cw) {
				t.Fatalf("book %d: codeword %d encodes to %d", b, c, got)
			}
			if got == c {
				distinct++
			}
		}
	}
	if distinct < q.Books()*k*9/10 {
		t.Fatalf("only %d of %d codewords are distinct", distinct, q.Books()*k)
	}
}

func TestDecodeEncodeFixedPoint(t *testing.T) {
	for _, shared := range []bool{false, true} {
		cfg := smallConfig()
		cfg.Shared = shared
		q := mustFit(t, synth(400, small, 3), cfg)
		test := synth(100, small, 99)
		codes := encodeAll(t, q, test)
		rec := make([]float32, len(test)*small.StateLen())
		enc := q.NewEncoder()
		if err := enc.DecodeBatch(rec, codes); err != nil {
			t.Fatal(err)
		}
		again := make([]uint8, len(codes))
		if err := enc.EncodeBatch(again, rec); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(codes, again) {
			t.Fatalf("shared=%v: encode(decode(z)) != z", shared)
		}
		// And for arbitrary codes: decode, encode, decode reaches the same state.
		rng := rand.New(rand.NewPCG(1, 1))
		for i := range codes {
			codes[i] = uint8(rng.IntN(q.Codewords()))
		}
		enc.DecodeBatch(rec, codes)
		enc.EncodeBatch(again, rec)
		for j := range codes {
			if codes[j] != again[j] && !equalBits(q.Codeword(j%small.Codes, int(codes[j])), q.Codeword(j%small.Codes, int(again[j]))) {
				t.Fatalf("shared=%v: code %d at %d came back as %d", shared, codes[j], j, again[j])
			}
		}
	}
}

// TestNearestMatchesNaive checks the Sgemm-based search against the plain
// squared-distance loop.
func TestNearestMatchesNaive(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	for _, k := range []int{2, 16, 64, 256} {
		for _, sd := range []int{1, 2, 8, 16} {
			n := 150
			book := randFloats(rng, k*sd)
			pts := randFloats(rng, n*sd)
			bookT := make([]float32, k*sd)
			norms := make([]float32, k)
			transposeBook(bookT, book, k, sd)
			centroidNorms(norms, book, k, sd)
			codes := make([]uint8, n)
			nearest(codes, 1, nil, pts, sd, n, sd, bookT, norms, make([]float32, n*k))
			for i := 0; i < n; i++ {
				best, bd := 0, math.Inf(1)
				for c := 0; c < k; c++ {
					if d := sqDist(pts[i*sd:(i+1)*sd], book[c*sd:]); d < bd {
						best, bd = c, d
					}
				}
				if got := int(codes[i]); got != best {
					dg := sqDist(pts[i*sd:(i+1)*sd], book[got*sd:])
					if dg-bd > 1e-5*(1+bd) {
						t.Fatalf("k=%d sd=%d point %d: code %d at %g, nearest %d at %g", k, sd, i, got, dg, best, bd)
					}
				}
			}
		}
	}
}

func randFloats(rng *rand.Rand, n int) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(rng.NormFloat64())
	}
	return v
}

func TestDeterministicAcrossGOMAXPROCS(t *testing.T) {
	states := synth(300, small, 4)
	cfg := smallConfig()
	cfg.Rounds = 2
	var files [][]byte
	var codes [][]uint8
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	for _, procs := range []int{1, 2, 3} {
		runtime.GOMAXPROCS(procs)
		q := mustFit(t, states, cfg)
		files = append(files, fileBytes(t, q))
		codes = append(codes, encodeAll(t, q, states))
		for _, w := range []int{1, 2, 5} {
			cfg := cfg
			cfg.Workers = w
			if !bytes.Equal(fileBytes(t, mustFit(t, states, cfg)), files[0]) {
				t.Fatalf("GOMAXPROCS %d, %d workers: a different quantizer", procs, w)
			}
		}
	}
	for i := range files {
		if !bytes.Equal(files[i], files[0]) || !bytes.Equal(codes[i], codes[0]) {
			t.Fatalf("GOMAXPROCS changed the result (run %d)", i)
		}
	}
	// The seed matters.
	cfg.Seed = 1
	if bytes.Equal(fileBytes(t, mustFit(t, states, cfg)), files[0]) {
		t.Fatal("seeds 0 and 1 gave the same quantizer")
	}
}

func TestEncodeIndependentOfBatching(t *testing.T) {
	q := mustFit(t, synth(300, small, 5), smallConfig())
	states := synth(97, small, 6)
	want := encodeAll(t, q, states)
	for _, workers := range []int{1, 2, 4} {
		enc := q.NewEncoderWorkers(workers)
		for _, batch := range []int{1, 3, 32, 97} {
			got := make([]uint8, 0, len(want))
			for lo := 0; lo < len(states); lo += batch {
				hi := min(len(states), lo+batch)
				part := make([]uint8, (hi-lo)*small.Codes)
				if err := enc.EncodeBatch(part, flatten(states[lo:hi])); err != nil {
					t.Fatal(err)
				}
				got = append(got, part...)
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("%d workers, batches of %d: different codes", workers, batch)
			}
		}
		one, err := q.Encode(states[10])
		if err != nil || !bytes.Equal(one, want[10*small.Codes:11*small.Codes]) {
			t.Fatalf("Encode of one state differs: %v", err)
		}
	}
}

func TestFitErrors(t *testing.T) {
	good := synth(40, small, 7)
	cfg := smallConfig()
	nan := synth(40, small, 7)
	nan[13][37] = float32(math.NaN())
	inf := synth(40, small, 7)
	inf[2][5] = float32(math.Inf(-1))
	wide := synth(40, small, 7)
	wide[3] = append(wide[3], 1)
	cases := []struct {
		name   string
		states [][]float32
		mod    func(*Config)
		want   string
		is     error
	}{
		{"empty", nil, nil, "the training set is empty", ErrTooFewStates},
		{"few", good[:15], nil, "15 states give 15 points per codebook, fewer than the 16 codewords: k-means cannot seed them from fewer than 16 states (and a held-out reconstruction to rely on takes 1600)", ErrTooFewStates},
		{"nan", nan, nil, "training state 13: value NaN at slot 1 channel 5 is not finite", nil},
		{"inf", inf, nil, "training state 2: value -Inf at slot 0 channel 5", nil},
		{"width", wide, nil, "training state 3 has 129 values, want 128", nil},
		{"codewords", good, func(c *Config) { c.Codewords = 300 }, "codewords 300 must be in 2..256", nil},
		{"split", good, func(c *Config) { c.Shape.Codes = 12 }, "do not split", nil},
		{"rounds", good, func(c *Config) { c.Rounds = -1 }, "rounds -1", nil},
		{"floor", good, func(c *Config) { c.StdFloor = 0 }, "std floor 0", nil},
	}
	for _, c := range cases {
		cfg := cfg
		if c.mod != nil {
			c.mod(&cfg)
		}
		_, err := Fit(c.states, cfg)
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), "opq: ") {
			t.Errorf("%s: error %v, want %q", c.name, err, c.want)
		}
		if c.is != nil && !errors.Is(err, c.is) {
			t.Errorf("%s: error %v does not wrap %v", c.name, err, c.is)
		}
	}
	// Shared codebooks pool the slots: 4 states x 4 slots = 16 points suffice.
	cfg.Shared = true
	if _, err := Fit(good[:4], cfg); err != nil {
		t.Errorf("shared codebooks from 16 points: %v", err)
	}
	if _, err := Fit(good[:3], cfg); !errors.Is(err, ErrTooFewStates) || !strings.Contains(err.Error(), "fewer than 4 states") {
		t.Errorf("shared codebooks from 12 points: %v", err)
	}
}

func TestEncodeErrors(t *testing.T) {
	q := mustFit(t, synth(100, small, 8), smallConfig())
	states := synth(20, small, 9)
	states[17][70] = float32(math.NaN())
	states[5][1] = float32(math.Inf(1))
	for _, w := range []int{1, 2} {
		err := q.NewEncoderWorkers(w).EncodeBatch(make([]uint8, 20*small.Codes), flatten(states))
		if err == nil || !strings.Contains(err.Error(), "opq: state 5: value +Inf at slot 0 channel 1 is not finite") {
			t.Errorf("%d workers: %v", w, err)
		}
	}
	if _, err := q.Encode(make([]float32, 5)); err == nil || !strings.Contains(err.Error(), "state has 5 values, want 128") {
		t.Errorf("short state: %v", err)
	}
	codes := make([]uint8, 2*small.Codes)
	codes[small.Codes+3] = 16
	err := q.NewEncoder().DecodeBatch(make([]float32, 2*small.StateLen()), codes)
	if err == nil || !strings.Contains(err.Error(), "observation 1 coordinate 3: code 16 is outside the 16 codewords") {
		t.Errorf("bad code: %v", err)
	}
	defer func() {
		if p := recover(); p == nil || !strings.HasPrefix(p.(string), "opq: ") {
			t.Errorf("a length mismatch did not panic with an opq message: %v", p)
		}
	}()
	q.NewEncoder().EncodeBatch(make([]uint8, 3), make([]float32, small.StateLen()))
}

// TestRotationsHelp checks, on data whose variance is spread unevenly and
// correlated across channels, that PCA beats no rotation and OPQ rounds do
// not lose to PCA, on held-out states.
func TestRotationsHelp(t *testing.T) {
	train, test := synth(800, small, 10), synth(300, small, 11)
	r2 := map[string]float64{}
	for _, c := range []struct {
		name   string
		rot    Rotation
		rounds int
	}{{"none", NoRotation, 0}, {"pca", PCA, 0}, {"opq", PCA, 4}} {
		cfg := smallConfig()
		cfg.Rotation, cfg.Rounds = c.rot, c.rounds
		q := mustFit(t, train, cfg)
		qu, err := q.Evaluate(test)
		if err != nil {
			t.Fatal(err)
		}
		r2[c.name] = qu.R2
		if !(qu.R2 > 0.5 && qu.R2 < 1) {
			t.Fatalf("%s: R^2 %g out of range", c.name, qu.R2)
		}
	}
	t.Logf("held-out R^2: %v", r2)
	if !(r2["pca"] > r2["none"]) || r2["opq"] < r2["pca"]-0.002 {
		t.Fatalf("held-out R^2 none %.4f, pca %.4f, opq %.4f: want none < pca <= opq", r2["none"], r2["pca"], r2["opq"])
	}
}

func TestRotationIsOrthogonal(t *testing.T) {
	for _, rounds := range []int{0, 3} {
		cfg := smallConfig()
		cfg.Rounds = rounds
		q := mustFit(t, synth(300, small, 12), cfg)
		d := small.Dim
		for i := 0; i < d; i++ {
			for j := 0; j < d; j++ {
				var s float64
				for k := 0; k < d; k++ {
					s += float64(q.rot[i*d+k]) * float64(q.rot[j*d+k])
				}
				want := 0.0
				if i == j {
					want = 1
				}
				if math.Abs(s-want) > 1e-5 {
					t.Fatalf("rounds %d: (R R^T)[%d][%d] = %g", rounds, i, j, s)
				}
			}
		}
	}
}

func TestPCABalancesVariance(t *testing.T) {
	// A diagonal covariance with eigenvalues 16, 8, 4, ... over 8 dims in 2
	// subspaces of 4: greedy balancing gives loads 16+1/4+... vs 8+4+...
	d, sd := 8, 4
	cov := make([]float64, d*d)
	vals := []float64{0.5, 16, 2, 8, 0.25, 4, 1, 0.125}
	for i, v := range vals {
		cov[i*d+i] = v
	}
	r, shares, err := pcaRotation(cov, d, sd)
	if err != nil {
		t.Fatal(err)
	}
	// Order 16, 8, 4, 2, 1, .5, .25, .125: 16->A, 8->B, 4->B, 2->B, 1->B (full),
	// then A takes .5, .25, .125.
	total := 31.875
	if math.Abs(shares[0]-16.875/total) > 1e-12 || math.Abs(shares[1]-15/total) > 1e-12 {
		t.Fatalf("subspace shares %v", shares)
	}
	// Column 0 is the direction of eigenvalue 16 (channel 1), positive.
	if r[1*d+0] != 1 || r[3*d+4] != 1 {
		t.Fatalf("rotation columns are not the expected eigenvectors: %v", r)
	}
}

func TestKMeansRepairsEmptyClusters(t *testing.T) {
	// 10 distinct points, each 5 times, for 16 centroids: some clusters must
	// stay duplicates, yet the result is deterministic and every point sits
	// on a centroid.
	rng := rand.New(rand.NewPCG(3, 3))
	base := randFloats(rng, 10*4)
	var pts []float32
	for r := 0; r < 5; r++ {
		pts = append(pts, base...)
	}
	var a, b kmeans
	a.run(pts, 50, 4, 16, 25, nil, rand.New(rand.NewPCG(1, 2)))
	b.run(pts, 50, 4, 16, 25, nil, rand.New(rand.NewPCG(1, 2)))
	if !equalBits(a.cent, b.cent) || a.mse != 0 {
		t.Fatalf("k-means on duplicates: mse %g, deterministic %v", a.mse, equalBits(a.cent, b.cent))
	}
	// Well-separated clusters of 30 points each: every centroid is used.
	pts = pts[:0]
	centers := randFloats(rng, 16*4)
	for i := 0; i < 16*30; i++ {
		c := i % 16
		for l := 0; l < 4; l++ {
			pts = append(pts, float32(20*centers[c*4+l])+float32(0.01*rng.NormFloat64())) // no fused multiply-add: the same points on every machine
		}
	}
	// Start from a bad init with every centroid at one point: repair must
	// spread them.
	init := make([]float32, 16*4)
	for c := 0; c < 16; c++ {
		copy(init[c*4:], pts[:4])
	}
	a.run(pts, 16*30, 4, 16, 25, init, nil)
	used := map[uint8]int{}
	for _, l := range a.labels[:16*30] {
		used[l]++
	}
	if len(used) != 16 {
		t.Fatalf("%d of 16 clusters used after repair", len(used))
	}
}

func TestQualityMeter(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 5))
	n, d := 50, 7
	var xs, ys [][]float32
	m := NewQualityMeter(d)
	for i := 0; i < n; i++ {
		x, y := randFloats(rng, d), randFloats(rng, d)
		for j := range y {
			y[j] = x[j] + 0.1*y[j]
		}
		xs, ys = append(xs, x), append(ys, y)
		m.Add(x, y)
	}
	var sse, sst float64
	for j := 0; j < d; j++ {
		var mean float64
		for i := 0; i < n; i++ {
			mean += float64(xs[i][j]) / float64(n)
		}
		for i := 0; i < n; i++ {
			sse += math.Pow(float64(xs[i][j])-float64(ys[i][j]), 2)
			sst += math.Pow(float64(xs[i][j])-mean, 2)
		}
	}
	got := m.Quality()
	if math.Abs(got.R2-(1-sse/sst)) > 1e-9 || math.Abs(got.MSE-sse/float64(n*d)) > 1e-12 || got.States != n {
		t.Fatalf("got %+v, want R^2 %g MSE %g", got, 1-sse/sst, sse/float64(n*d))
	}
}

func TestSimStates(t *testing.T) {
	// The default geometry's structure (32 slots, 1,024 codes) on sim states
	// with 64 channels per slot: 32 subspaces of 2 dims.
	train, test := simStates(t, 12, 20, 1, 64), simStates(t, 4, 20, 2, 64)
	cfg := DefaultConfig()
	cfg.Shape = trajectory.Shape{Slots: 32, Dim: 64, Codes: 1024}
	cfg.Codewords = 16
	q := mustFit(t, train, cfg)
	if q.Books() != 1024 || q.Bits() != 4096 {
		t.Fatalf("books %d bits %d", q.Books(), q.Bits())
	}
	qu, err := q.Evaluate(test)
	if err != nil {
		t.Fatal(err)
	}
	if qu.R2 < 0.8 {
		t.Fatalf("held-out sim R^2 %.4f", qu.R2)
	}
}

// TestIdentityShortcut checks that skipping the multiplication by an identity
// rotation gives the codes and states of the full multiplication.
func TestIdentityShortcut(t *testing.T) {
	cfg := smallConfig()
	cfg.Rotation = NoRotation
	q := mustFit(t, synth(200, small, 13), cfg)
	if !q.ident {
		t.Fatal("a NoRotation quantizer does not know its rotation is the identity")
	}
	states := synth(30, small, 14)
	fast := encodeAll(t, q, states)
	rec := make([]float32, 30*small.StateLen())
	q.NewEncoder().DecodeBatch(rec, fast)
	q.ident = false
	if slow := encodeAll(t, q, states); !bytes.Equal(fast, slow) {
		t.Fatal("identity shortcut changed the codes")
	}
	rec2 := make([]float32, len(rec))
	q.NewEncoder().DecodeBatch(rec2, fast)
	if !equalBits(rec, rec2) {
		t.Fatal("identity shortcut changed decoded states")
	}
}

func TestAddCoordinateDelta(t *testing.T) {
	cfg := smallConfig()
	cfg.Rounds = 1
	q := mustFit(t, synth(200, small, 15), cfg)
	z := encodeAll(t, q, synth(1, small, 16))
	base, _ := q.Decode(z)
	for j := 0; j < small.Codes; j++ {
		to := uint8((int(z[j]) + 1 + j) % q.Codewords())
		got := append([]float32(nil), base...)
		q.AddCoordinateDelta(got, j, z[j], to)
		z2 := bytes.Clone(z)
		z2[j] = to
		want, _ := q.Decode(z2)
		for i := range want {
			if d := math.Abs(float64(got[i] - want[i])); d > 1e-4*(1+math.Abs(float64(want[i]))) {
				t.Fatalf("coordinate %d value %d: delta gives %g, decode %g", j, i, got[i], want[i])
			}
			if i/small.Dim != j/q.Subspaces() && got[i] != base[i] {
				t.Fatalf("coordinate %d changed slot %d", j, i/small.Dim)
			}
		}
	}
}
