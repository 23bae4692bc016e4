package sim

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"

	"github.com/memowm/memowm/trajectory"
)

// contentDigest hashes everything an episode, its questions and stats hold.
func contentDigest(ep *trajectory.Episode, qs []trajectory.Question, st Stats) string {
	h := sha256.New()
	var b [8]byte
	put := func(v uint64) { binary.LittleEndian.PutUint64(b[:], v); h.Write(b[:]) }
	put(uint64(ep.ID))
	put(uint64(len(ep.States)))
	for _, s := range ep.States {
		for _, v := range s {
			put(uint64(math.Float32bits(v)))
		}
	}
	for _, a := range ep.Actions {
		js, _ := json.Marshal(a)
		h.Write(js)
	}
	for _, f := range ep.Facts {
		put(uint64(len(f)))
		h.Write(f)
	}
	js, _ := json.Marshal(qs)
	h.Write(js)
	js, _ = json.Marshal(st)
	h.Write(js)
	return hex.EncodeToString(h.Sum(nil))
}

// goldenConfigs are the configurations of golden.
func goldenConfigs() []Config {
	a := DefaultConfig()
	a.Shape.Dim, a.Episodes, a.Steps, a.Questions = 16, 3, 40, 2
	b := a
	b.Noise, b.Seed = 0, 7
	c := a
	c.Episodes, c.Steps, c.Seed = 1, 700, 3
	return []Config{a, b, c}
}

// golden are contentDigest(Episode(i)) of goldenConfigs()[config], computed
// with the sim of 54674e8, before episodes could be made without their
// states: Episode, EpisodeRows and WriteFile must keep making them.
var golden = []struct {
	config, episode int
	digest          string
}{
	{0, 0, "5ffb2377b15324f11241f5661bcee21cd6687545d4267b664d2dd9df73fb935a"},
	{0, 1, "3208e8f767bec3c81e2a3d47e894d2593010403ac21e4fb75b65537f22f6c17f"},
	{0, 2, "65ad293ed71307109be82e7009beb8b379fa6b2c21dbf1eff72a6a0a7bfa79e3"},
	{1, 0, "67a089197c5f1be662632126e5a00b804894b971561c88df98ea1b4cae9fde10"},
	{1, 1, "c022576e2d8bb8d23318bea64ba4dbfea37cf05aa7ddc05d5478abbdaecd347a"},
	{1, 2, "7787846a00f11a94b7d7096a25da5b8e4b532c66fad4a905755fc9651afcc715"},
	{2, 0, "3d6f8692d67ae000dc3911cc1943cded64c70be7814974d9d29f60726793f895"},
}

// rowsEpisode is r's episode with the states State makes, in order.
func rowsEpisode(t *testing.T, r *Rows, sl int) *trajectory.Episode {
	t.Helper()
	ep := *r.Episode
	for i := range r.Len() {
		s := make([]float32, sl)
		if err := r.State(i, s); err != nil {
			t.Fatal(err)
		}
		ep.States = append(ep.States, s)
	}
	return &ep
}

func TestGoldenEpisodes(t *testing.T) {
	cfgs := goldenConfigs()
	for _, g := range golden {
		cfg := cfgs[g.config]
		w, err := New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		ep, qs, st := w.Episode(g.episode)
		if d := contentDigest(ep, qs, st); d != g.digest {
			t.Errorf("config %d episode %d: Episode gives digest %s, want %s", g.config, g.episode, d, g.digest)
		}
		r := w.EpisodeRows(g.episode)
		if r.Episode.States != nil || r.Episode.Codes != nil {
			t.Fatal("EpisodeRows holds observations")
		}
		if d := contentDigest(rowsEpisode(t, r, cfg.Shape.StateLen()), r.Questions, r.Stats); d != g.digest {
			t.Errorf("config %d episode %d: EpisodeRows gives digest %s, want %s", g.config, g.episode, d, g.digest)
		}
	}
}

// TestRowsAnyOrder: State gives Episode's state whatever order it is asked
// in (backwards replays, skipping ahead draws the skipped jitter), and
// refuses what is not there.
func TestRowsAnyOrder(t *testing.T) {
	for _, noise := range []float64{0.05, 0} {
		cfg := smallConfig()
		cfg.Steps, cfg.Noise = 30, noise
		w, _ := New(cfg)
		ep, _, _ := w.Episode(2)
		r := w.EpisodeRows(2)
		dst := make([]float32, cfg.Shape.StateLen())
		for _, i := range []int{5, 5, 6, 20, 3, 0, 30, 29, 30, 1} {
			if err := r.State(i, dst); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(dst, ep.States[i]) {
				t.Fatalf("noise %g: state %d differs from Episode's", noise, i)
			}
		}
		if err := r.State(31, dst); err == nil || !strings.HasPrefix(err.Error(), "sim: ") {
			t.Errorf("state 31 of 31: %v", err)
		}
		if err := r.State(0, dst[1:]); err == nil {
			t.Error("a short dst was accepted")
		}
	}
}

// TestWriteFileAsEpisodes: WriteFile, which makes states row by row, writes
// the bytes that writing Episode's episodes (states held) writes, for states
// and for codes.
func TestWriteFileAsEpisodes(t *testing.T) {
	cfg := smallConfig()
	cfg.Episodes, cfg.Steps = 3, 150 // more than QuantizeBatch observations
	nc := 64
	// A stand-in quantizer (a fixed function of each state): what matters
	// here is that WriteFileWith gives it the states in order.
	quant := func(dst []uint8, states []float32) error {
		sl := cfg.Shape.StateLen()
		for i := range len(states) / sl {
			for j := range nc {
				dst[i*nc+j] = uint8(math.Float32bits(states[i*sl+j*sl/nc]) >> 20)
			}
		}
		return nil
	}
	codeMeta := trajectory.Meta{Shape: trajectory.Shape{Slots: cfg.Shape.Slots, Dim: cfg.Shape.Dim, Codes: nc}, Content: trajectory.Codes}
	dir := t.TempDir()
	for _, codes := range []bool{false, true} {
		streamed, held := filepath.Join(dir, "streamed.arrow"), filepath.Join(dir, "held.arrow")
		opt := WriteOptions{}
		meta := trajectory.Meta{Shape: cfg.Shape, Content: trajectory.States}
		if codes {
			opt.Quantize, opt.Meta, meta = quant, codeMeta, codeMeta
		}
		if _, err := WriteFileWith(streamed, cfg, opt); err != nil {
			t.Fatal(err)
		}
		w, _ := New(cfg)
		out, err := trajectory.Create(held, meta)
		if err != nil {
			t.Fatal(err)
		}
		var qs []trajectory.Question
		for i := range cfg.Episodes {
			ep, q, _ := w.Episode(i)
			if codes {
				for _, s := range ep.States {
					c := make([]uint8, nc)
					quant(c, s)
					ep.Codes = append(ep.Codes, c)
				}
				ep.States = nil
			}
			if err := out.Write(ep); err != nil {
				t.Fatal(err)
			}
			qs = append(qs, q...)
		}
		if err := out.SetQuestions(qs); err != nil {
			t.Fatal(err)
		}
		if err := out.Close(); err != nil {
			t.Fatal(err)
		}
		for _, suffix := range []string{"", ".questions.jsonl"} {
			a, err1 := os.ReadFile(streamed + suffix)
			b, err2 := os.ReadFile(held + suffix)
			if err1 != nil || err2 != nil || !bytes.Equal(a, b) {
				t.Fatalf("codes %v: WriteFile%s differs from writing Episode's episodes (%v %v)", codes, suffix, err1, err2)
			}
		}
	}
}

// heapSampler is a trajectory.Writer that measures the live heap (after a
// collection) every few rows of every episode, and fails any episode that
// holds states.
type heapSampler struct {
	t    *testing.T
	w    *trajectory.Writer
	peak uint64
	rows int
}

func (h *heapSampler) sample() {
	if h.rows++; h.rows%200 == 0 {
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		h.peak = max(h.peak, ms.HeapAlloc)
	}
}

func (h *heapSampler) Write(ep *trajectory.Episode) error {
	if ep.States != nil {
		h.t.Errorf("episode %d is written with its %d states held", ep.ID, len(ep.States))
	}
	return h.w.Write(ep)
}

func (h *heapSampler) WriteRows(ep *trajectory.Episode, n int, state func(t int, dst []float32) error) error {
	return h.w.WriteRows(ep, n, func(t int, dst []float32) error {
		h.sample()
		return state(t, dst)
	})
}

// TestWriteBoundedMemory: writing one episode of 4,000 steps holds at most
// a few MB more than one of 200 steps, for states and for codes, while its
// states alone are 32 MB: no episode is held as states.
func TestWriteBoundedMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 64 MB")
	}
	peak := func(steps int, codes bool) uint64 {
		cfg := DefaultConfig()
		cfg.Shape.Dim, cfg.Episodes, cfg.Steps = 64, 1, steps
		cfg.Shape.Codes = 32
		w, err := New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		meta := w.Meta()
		h := &heapSampler{t: t}
		opt := WriteOptions{}
		if codes {
			meta = trajectory.Meta{Shape: cfg.Shape, Content: trajectory.Codes}
			opt.Meta = meta
			opt.Quantize = func(dst []uint8, states []float32) error {
				for range len(states) / cfg.Shape.StateLen() {
					h.sample()
				}
				clear(dst)
				return nil
			}
		}
		out, err := trajectory.Create(filepath.Join(t.TempDir(), "x.arrow"), meta)
		if err != nil {
			t.Fatal(err)
		}
		defer out.Abort()
		h.w = out
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		base := ms.HeapAlloc
		if _, err := writeEpisodes(h, w, opt, &Result{}); err != nil {
			t.Fatal(err)
		}
		if h.peak == 0 {
			t.Fatal("no rows were sampled")
		}
		return h.peak - min(base, h.peak)
	}
	const states = 4000 * 32 * 64 * 4
	for _, codes := range []bool{false, true} {
		short, long := peak(200, codes), peak(4000, codes)
		t.Logf("codes %v: live heap 200 steps %.1f MB, 4,000 steps %.1f MB", codes, float64(short)/1e6, float64(long)/1e6)
		if long > short+states/8 {
			t.Errorf("codes %v: one episode of 4,000 steps peaks at %.1f MB of live heap, 200 steps at %.1f MB: memory grows with the episode (its states are %.1f MB)",
				codes, float64(long)/1e6, float64(short)/1e6, float64(states)/1e6)
		}
	}
}

// TestWriteFailureLeavesNothing: a quantizer that fails in the second
// episode leaves neither the file nor its questions nor a temporary file.
func TestWriteFailureLeavesNothing(t *testing.T) {
	dir := t.TempDir()
	cfg := smallConfig()
	cfg.Episodes = 3
	calls := 0
	opt := WriteOptions{
		Meta: trajectory.Meta{Shape: cfg.Shape, Content: trajectory.Codes},
		Quantize: func(dst []uint8, states []float32) error {
			if calls++; calls == 2 {
				return errors.New("no more")
			}
			clear(dst)
			return nil
		},
	}
	_, err := WriteFileWith(filepath.Join(dir, "x.arrow"), cfg, opt)
	if err == nil || !strings.Contains(err.Error(), "sim: episode 1: no more") {
		t.Fatalf("error %v, want episode 1's", err)
	}
	if left, _ := os.ReadDir(dir); len(left) != 0 {
		t.Fatalf("a failed WriteFileWith left %v", left)
	}
	opt.Meta.Shape.Dim++
	if _, err := WriteFileWith(filepath.Join(dir, "x.arrow"), cfg, opt); err == nil || !strings.HasPrefix(err.Error(), "sim: ") {
		t.Fatalf("codes of another shape: %v", err)
	}
}
