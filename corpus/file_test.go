package corpus

import (
	"bytes"
	"context"
	"errors"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/memowm/memowm/trajectory"
	"github.com/memowm/memowm/worldmodel"
)

// microConfig is a world model small enough to train in milliseconds.
func microConfig() worldmodel.Config {
	return worldmodel.Config{
		Profile: worldmodel.ProfileF32, MaxHistory: 3, Slots: 3, Subspaces: 2, Codewords: 5, CodeDim: 2,
		Layers: 2, Heads: 2, MLP: 6, ActionTypes: 17, CoordBins: 4, ActionDim: 3, ByteDim: 2,
		PayloadHidden: 3, MaxPayload: 4, Tasks: 1,
	}
}

// sequences draws sequences of the given lengths (states) whose codes
// change a few at a time, with random actions (some with payloads).
func sequences(rng *rand.Rand, c *worldmodel.Config, lens ...int) []worldmodel.Sequence {
	J := c.Coords()
	seqs := make([]worldmodel.Sequence, len(lens))
	for i, n := range lens {
		z := make([]uint8, J)
		for j := range z {
			z[j] = uint8(rng.IntN(c.Codewords))
		}
		for t := range n {
			z[rng.IntN(J)] = uint8(rng.IntN(c.Codewords))
			seqs[i].Codes = append(seqs[i].Codes, bytes.Clone(z))
			if t == n-1 {
				break
			}
			a := trajectory.Action{Type: trajectory.ActionType(rng.IntN(c.ActionTypes))}
			if rng.IntN(2) == 0 {
				a.HasPos, a.X, a.Y = true, rng.Float32(), rng.Float32()
			}
			if rng.IntN(2) == 0 {
				a.HasDelta, a.DX, a.DY = true, float32(rng.NormFloat64()*30), float32(rng.NormFloat64())
			}
			for range rng.IntN(c.MaxPayload + 1) {
				a.Payload = append(a.Payload, byte(rng.IntN(256)))
			}
			seqs[i].Actions = append(seqs[i].Actions, a)
		}
	}
	return seqs
}

// episodes returns next for Build over seqs, every other one Compact (as
// encode's and fit's readers give them).
func episodes(seqs []worldmodel.Sequence, slots int) func() (*trajectory.Episode, error) {
	i := 0
	return func() (*trajectory.Episode, error) {
		if i == len(seqs) {
			return nil, io.EOF
		}
		s := seqs[i]
		ep := &trajectory.Episode{ID: int64(i), Actions: s.Actions}
		if i%2 == 0 {
			ep.Codes = s.Codes
		} else {
			ep.Compact = trajectory.NewCodeRows(len(s.Codes[0]), slots)
			for _, z := range s.Codes {
				ep.Compact.Append(z)
			}
		}
		i++
		return ep, nil
	}
}

func build(t *testing.T, dir string, seqs []worldmodel.Sequence, c *worldmodel.Config) *File {
	t.Helper()
	f, err := Build(dir, c.Coords(), episodes(seqs, c.Slots), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

// TestReadBack: every window a trainer could ask for reads back the codes
// and actions Build was given, across sequences of 1 to 150 states; the
// folder holds no file while the corpus is open or after.
func TestReadBack(t *testing.T) {
	c := microConfig()
	rng := rand.New(rand.NewPCG(1, 1))
	seqs := sequences(rng, &c, 1, 2, 17, 150, 5)
	dir := t.TempDir()
	f := build(t, dir, seqs, &c)
	if left, _ := os.ReadDir(dir); len(left) != 0 {
		t.Errorf("the folder holds %v while the corpus is open", left)
	}
	if f.Sequences() != len(seqs) || f.Transitions() != 0+1+16+149+4 {
		t.Fatalf("%d sequences, %d transitions", f.Sequences(), f.Transitions())
	}
	mem := worldmodel.Seqs(seqs)
	J := c.Coords()
	buf, want := make([]uint8, 150*J), make([]uint8, 150*J)
	for i := range seqs {
		n := len(seqs[i].Codes)
		if f.States(i) != n {
			t.Fatalf("sequence %d: %d states, want %d", i, f.States(i), n)
		}
		for from := 0; from < n; from += 1 + rng.IntN(7) {
			for to := from + 1; to <= n; to += 1 + rng.IntN(9) {
				got, err := f.Read(buf, nil, i, from, to)
				if err != nil {
					t.Fatal(err)
				}
				w, _ := mem.Read(want, nil, i, from, to)
				if !bytes.Equal(buf[:(to-from)*J], want[:(to-from)*J]) {
					t.Fatalf("sequence %d states %d..%d: codes differ", i, from, to)
				}
				if len(got) != len(w) {
					t.Fatalf("sequence %d states %d..%d: %d actions, want %d", i, from, to, len(got), len(w))
				}
				for k := range got {
					if len(w[k].Payload) == 0 {
						w[k].Payload = nil
					}
					if !reflect.DeepEqual(got[k], w[k]) {
						t.Fatalf("sequence %d action %d: %+v, want %+v", i, from+k, got[k], w[k])
					}
				}
			}
		}
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if left, _ := os.ReadDir(dir); len(left) != 0 {
		t.Errorf("the folder holds %v after Close", left)
	}
	if _, err := f.Read(buf, nil, 0, 0, 1); err == nil || !strings.HasPrefix(err.Error(), "corpus: ") {
		t.Errorf("read after Close: %v", err)
	}
}

// TestTrainSameAsMemory: training on the file gives the same weights bit
// for bit as on the same sequences in memory, the same held-out figures
// and output priors, and a checkpoint of a run in memory resumes on the
// file (the fingerprints agree).
func TestTrainSameAsMemory(t *testing.T) {
	c := microConfig()
	rng := rand.New(rand.NewPCG(2, 2))
	seqs := sequences(rng, &c, 70, 3, 9, 130)
	held := sequences(rng, &c, 66, 4)
	dir := t.TempDir()
	f, h := build(t, dir, seqs, &c), build(t, dir, held, &c)
	tc := worldmodel.TrainConfig{Steps: 6, Batch: 5, Seed: 3, Threads: 2}
	var weights [2][]float32
	var evals [2]worldmodel.EvalStats
	var rates [2]float64
	ck := filepath.Join(dir, "run.ckpt")
	for k, data := range []worldmodel.Corpus{worldmodel.Seqs(seqs), f} {
		m, err := worldmodel.New(c, 4)
		if err != nil {
			t.Fatal(err)
		}
		if rates[k], err = worldmodel.InitOutputPriorsOn(m, data); err != nil {
			t.Fatal(err)
		}
		tr, err := worldmodel.NewTrainerOn(m, data, tc)
		if err != nil {
			t.Fatal(err)
		}
		for range 3 {
			tr.Step()
		}
		if k == 0 {
			if err := tr.SaveCheckpoint(ck); err != nil {
				t.Fatal(err)
			}
		}
		eval := worldmodel.Corpus(worldmodel.Seqs(held))
		if k == 1 {
			eval = h
		}
		if err := tr.Run(context.Background(), worldmodel.RunConfig{Eval: eval, EvalEvery: 2}); err != nil {
			t.Fatal(err)
		}
		weights[k] = m.Params().Data
		if evals[k], err = tr.EvaluateOn(eval); err != nil {
			t.Fatal(err)
		}
	}
	if rates[0] != rates[1] {
		t.Errorf("copy rate %v in memory, %v from the file", rates[0], rates[1])
	}
	for i := range weights[0] {
		if weights[0][i] != weights[1][i] {
			t.Fatalf("weight %d: %g in memory, %g from the file", i, weights[0][i], weights[1][i])
		}
	}
	if evals[0] != evals[1] {
		t.Errorf("held-out %+v in memory, %+v from the file", evals[0], evals[1])
	}
	ckp, err := worldmodel.LoadCheckpoint(ck)
	if err != nil {
		t.Fatal(err)
	}
	tr, err := ckp.ResumeOn(f, 0, 1)
	if err != nil {
		t.Fatalf("a checkpoint of the run in memory does not resume on the file: %v", err)
	}
	if err := tr.Run(context.Background(), worldmodel.RunConfig{}); err != nil {
		t.Fatal(err)
	}
	for i, w := range tr.Model().Params().Data {
		if w != weights[0][i] {
			t.Fatalf("resumed on the file: weight %d is %g, want %g", i, w, weights[0][i])
		}
	}
}

// TestBuildErrors: episodes Build cannot keep are errors naming the episode.
func TestBuildErrors(t *testing.T) {
	c := microConfig()
	rng := rand.New(rand.NewPCG(3, 3))
	good := sequences(rng, &c, 4)[0]
	for _, tc := range []struct {
		name string
		ep   trajectory.Episode
		want string
	}{
		{"states", trajectory.Episode{ID: 7, States: [][]float32{{1}}}, "episode 7 holds states"},
		{"empty", trajectory.Episode{ID: 8}, "episode 8 has no states"},
		{"actions", trajectory.Episode{ID: 9, Codes: good.Codes, Actions: good.Actions[:1]}, "episode 9 has 4 states and 1 actions"},
		{"width", trajectory.Episode{ID: 10, Codes: [][]uint8{{1, 2}}}, "episode 10 state 0 has 2 codes, want 6"},
	} {
		done := false
		dir := t.TempDir()
		_, err := Build(dir, c.Coords(), func() (*trajectory.Episode, error) {
			if done {
				return nil, io.EOF
			}
			done = true
			return &tc.ep, nil
		}, nil)
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "corpus: ") {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
		if left, _ := os.ReadDir(dir); len(left) != 0 {
			t.Errorf("%s: the failed build left %v", tc.name, left)
		}
	}
	boom := errors.New("the reader failed")
	if _, err := Build(t.TempDir(), 6, func() (*trajectory.Episode, error) { return nil, boom }, nil); !errors.Is(err, boom) {
		t.Errorf("a reader's error: %v", err)
	}
	if _, err := Build(filepath.Join(t.TempDir(), "missing"), 6, episodes(nil, 3), nil); err == nil {
		t.Error("a missing folder built a corpus")
	}
}

// TestReadFailsTraining: a corpus that can no longer be read stops the run
// with an error, and the step that failed changed nothing.
func TestReadFailsTraining(t *testing.T) {
	c := microConfig()
	rng := rand.New(rand.NewPCG(4, 4))
	f := build(t, t.TempDir(), sequences(rng, &c, 30, 30), &c)
	m, err := worldmodel.New(c, 1)
	if err != nil {
		t.Fatal(err)
	}
	tr, err := worldmodel.NewTrainerOn(m, f, worldmodel.TrainConfig{Steps: 5, Batch: 4, Seed: 1, Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	tr.Step()
	before := append([]float32(nil), m.Params().Data...)
	f.Close()
	err = tr.Run(context.Background(), worldmodel.RunConfig{})
	if err == nil || !strings.Contains(err.Error(), "reading the training data") || tr.Err() == nil {
		t.Fatalf("Run on a closed corpus: %v", err)
	}
	if tr.StepsDone() != 1 || !reflect.DeepEqual(before, m.Params().Data) {
		t.Errorf("a failed step counted (%d steps) or changed the weights", tr.StepsDone())
	}
	// Bad requests are errors, not panics.
	for _, r := range [][3]int{{-1, 0, 1}, {2, 0, 1}, {0, 3, 2}, {0, 0, 31}} {
		if _, err := f.Read(make([]uint8, 64*6), nil, r[0], r[1], r[2]); err == nil {
			t.Errorf("Read(%v) succeeded", r)
		}
	}
}

// TestFirst checks worldmodel.First and worldmodel.Transitions on a corpus
// file: the first n sequences read and evaluate as those sequences in
// memory do.
func TestFirst(t *testing.T) {
	c := microConfig()
	rng := rand.New(rand.NewPCG(5, 5))
	seqs := sequences(rng, &c, 70, 1, 9, 130)
	f := build(t, t.TempDir(), seqs, &c)
	if got := worldmodel.Transitions(f); got != 69+0+8+129 {
		t.Fatalf("Transitions %d, want 206", got)
	}
	if worldmodel.First(f, 9) != worldmodel.Corpus(f) || worldmodel.First(f, -1).Sequences() != 0 {
		t.Fatal("First outside 0..Sequences")
	}
	first := worldmodel.First(f, 3)
	if first.Sequences() != 3 || worldmodel.Transitions(first) != 77 {
		t.Fatalf("First(3): %d sequences, %d transitions", first.Sequences(), worldmodel.Transitions(first))
	}
	m, err := worldmodel.New(c, 1)
	if err != nil {
		t.Fatal(err)
	}
	tr, err := worldmodel.NewTrainerOn(m, f, worldmodel.TrainConfig{Steps: 1, Batch: 2, Seed: 1, Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	a, err := tr.EvaluateOn(first)
	if err != nil {
		t.Fatal(err)
	}
	b, err := tr.EvaluateOn(worldmodel.Seqs(seqs[:3]))
	if err != nil {
		t.Fatal(err)
	}
	if a != b || a.Transitions != 77 {
		t.Fatalf("First(3) evaluates to %+v, the sequences in memory to %+v", a, b)
	}
}
