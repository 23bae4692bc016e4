package codec

import (
	"os"
	"path/filepath"
	"sync"
	"testing"

	fixturepkg "github.com/memowm/memowm/internal/fixture"
	"github.com/memowm/memowm/model"
	"github.com/memowm/memowm/sim"
	"github.com/memowm/memowm/trajectory"
	"github.com/memowm/memowm/worldmodel"
)

// Encode and decode speed of the world model's table alone (wm-all-send)
// and of the mixing prior, on the same bundle and episodes: the fixture's
// screens with 80% of slots repeating (recorded programs), and its own
// episodes (Dense: most codes change every step, as in the sim world).
// Compare the two in one run:
//
//	go test ./codec -run '^$' -bench 'Encode|Decode' -benchtime 3x
func benchmarkEncode(b *testing.B, opt Options, dense bool) {
	bun, p, eps, obs := benchFixture(b, dense)
	benchEncode(b, bun, p, eps, obs, opt)
}

func benchEncode(b *testing.B, bun *model.Bundle, p worldmodel.Predictor, eps []*trajectory.Episode, obs int, opt Options) {
	keep := model.Policy{Kind: model.KeepAll}
	dir := b.TempDir()
	var size int64
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		path := filepath.Join(dir, "b.mwm")
		w, err := CreateWith(path, bun, p, keep, opt)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := w.Write(eps); err != nil {
			b.Fatal(err)
		}
		if err := w.Close(); err != nil {
			b.Fatal(err)
		}
		fi, _ := os.Stat(path)
		size = fi.Size()
	}
	b.ReportMetric(float64(obs*b.N)/b.Elapsed().Seconds(), "obs/s")
	b.ReportMetric(float64(size*8)/float64(obs), "bits/obs")
}

func benchmarkDecode(b *testing.B, opt Options, dense bool) {
	bun, p, eps, obs := benchFixture(b, dense)
	benchDecode(b, bun, p, eps, obs, opt)
}

func benchDecode(b *testing.B, bun *model.Bundle, p worldmodel.Predictor, eps []*trajectory.Episode, obs int, opt Options) {
	keep := model.Policy{Kind: model.KeepAll}
	path, _ := encodeFileWith(b, bun, p, keep, opt, eps)
	r := openChecked(b, path, bun)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := r.Decode(p, nil); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(obs*b.N)/b.Elapsed().Seconds(), "obs/s")
}

// benchFixture is the mix fixture (80% of slots repeat), or with dense the
// fixture's own episodes, where most codes change every step.
func benchFixture(b *testing.B, dense bool) (*model.Bundle, worldmodel.Predictor, []*trajectory.Episode, int) {
	bun, p, eps := mixFixture(b)
	if dense {
		_, eps = fixture(b)
	}
	obs := 0
	for _, ep := range eps {
		obs += len(ep.Codes)
	}
	return bun, p, eps, obs
}

func BenchmarkEncodeAllSend(b *testing.B)      { benchmarkEncode(b, Options{}, false) }
func BenchmarkEncodeMix(b *testing.B)          { benchmarkEncode(b, Options{Mix: true}, false) }
func BenchmarkDecodeAllSend(b *testing.B)      { benchmarkDecode(b, Options{}, false) }
func BenchmarkDecodeMix(b *testing.B)          { benchmarkDecode(b, Options{Mix: true}, false) }
func BenchmarkEncodeAllSendDense(b *testing.B) { benchmarkEncode(b, Options{}, true) }
func BenchmarkEncodeMixDense(b *testing.B)     { benchmarkEncode(b, Options{Mix: true}, true) }
func BenchmarkDecodeAllSendDense(b *testing.B) { benchmarkDecode(b, Options{}, true) }
func BenchmarkDecodeMixDense(b *testing.B)     { benchmarkDecode(b, Options{Mix: true}, true) }

// manyEpisodes is a file's worth of episodes: manyCount sim episodes of
// manySteps actions from the fixture's world, coded with the fixture's
// quantizer (dense), or with 80% of slots repeating.
const manyCount, manySteps = 24, 16

var (
	manyOnce sync.Once
	manyEps  []*trajectory.Episode
	manyErr  error
)

func manyFixture(t testing.TB, dense bool) (*model.Bundle, worldmodel.Predictor, []*trajectory.Episode, int) {
	t.Helper()
	manyOnce.Do(func() {
		s, err := fixturepkg.Get()
		if err != nil {
			manyErr = err
			return
		}
		cfg := sim.DefaultConfig()
		cfg.Shape.Dim, cfg.Episodes, cfg.Steps, cfg.Seed = 32, manyCount, manySteps, 7
		w, err := sim.New(cfg)
		if err != nil {
			manyErr = err
			return
		}
		for i := range cfg.Episodes {
			ep, _, _ := w.Episode(i)
			c := &trajectory.Episode{ID: ep.ID, Actions: ep.Actions, Codes: make([][]uint8, len(ep.States))}
			for k, st := range ep.States {
				if c.Codes[k], err = s.Q.Encode(st); err != nil {
					manyErr = err
					return
				}
			}
			manyEps = append(manyEps, c)
		}
	})
	if manyErr != nil {
		t.Fatal(manyErr)
	}
	bun, p := testBundle(t, 1, model.Policy{Kind: model.KeepAll})
	eps := manyEps
	if !dense {
		eps = fixturepkg.Repeating(eps, p.Config().Subspaces)
	}
	obs := 0
	for _, ep := range eps {
		obs += len(ep.Codes)
	}
	return bun, p, eps, obs
}

// The same on a file of many episodes (manyCount of manySteps+1
// observations), where the episodes' coding runs on several goroutines:
//
//	go test ./codec -run '^$' -bench 'Many' -benchtime 3x -cpu 1,2
func benchmarkMany(b *testing.B, opt Options, dense, decode bool) {
	bun, p, eps, obs := manyFixture(b, dense)
	if decode {
		benchDecode(b, bun, p, eps, obs, opt)
	} else {
		benchEncode(b, bun, p, eps, obs, opt)
	}
}

func BenchmarkEncodeMixMany(b *testing.B)      { benchmarkMany(b, Options{Mix: true}, false, false) }
func BenchmarkDecodeMixMany(b *testing.B)      { benchmarkMany(b, Options{Mix: true}, false, true) }
func BenchmarkEncodeMixManyDense(b *testing.B) { benchmarkMany(b, Options{Mix: true}, true, false) }
func BenchmarkDecodeMixManyDense(b *testing.B) { benchmarkMany(b, Options{Mix: true}, true, true) }

// replay is a predictor that returns the predictions it recorded, call by
// call, from rec (its first run records them): a benchmark of a lossless
// writer or decoder with it measures the coding alone, without the world
// model.
type replay struct {
	worldmodel.Predictor
	calls [][]worldmodel.Prediction
	n     int
	rec   bool
}

func (r *replay) Predict(dst []worldmodel.Prediction, hs []worldmodel.History) ([]worldmodel.Prediction, error) {
	if r.rec {
		out, err := r.Predictor.Predict(nil, hs)
		if err != nil {
			return nil, err
		}
		r.calls = append(r.calls, out)
		return out, nil
	}
	out := r.calls[r.n%len(r.calls)]
	r.n++
	return out, nil
}

// The coding of the many-episode file alone (the world model's predictions
// replayed), encode and decode:
//
//	go test ./codec -run '^$' -bench 'Coding' -benchtime 3x -cpu 1,2
func benchmarkCoding(b *testing.B, dense, decode bool) {
	bun, p, eps, obs := manyFixture(b, dense)
	rp := &replay{Predictor: p, rec: true}
	keep := model.Policy{Kind: model.KeepAll}
	path, _ := encodeFileWith(b, bun, rp, keep, Options{Mix: true}, eps)
	rp.rec = false
	if decode {
		benchDecode(b, bun, rp, eps, obs, Options{Mix: true})
	} else {
		benchEncode(b, bun, rp, eps, obs, Options{Mix: true})
	}
	_ = path
}

func BenchmarkEncodeCoding(b *testing.B)      { benchmarkCoding(b, false, false) }
func BenchmarkDecodeCoding(b *testing.B)      { benchmarkCoding(b, false, true) }
func BenchmarkEncodeCodingDense(b *testing.B) { benchmarkCoding(b, true, false) }
func BenchmarkDecodeCodingDense(b *testing.B) { benchmarkCoding(b, true, true) }

// The same in the int8 profile: the fixture's bundle converted
// (worldmodel.CalibrateInt8 on every window of the episodes), so a run
// compares the two profiles on one file:
//
//	go test ./codec -run '^$' -bench 'MixMany(Dense)?(Int8)?$' -benchtime 3x -cpu 2
func benchmarkManyInt8(b *testing.B, dense, decode bool) {
	bun, _, eps, obs := manyFixture(b, dense)
	cfg := bun.Model.Config()
	hs, err := cfg.CalibrationHistories(worldmodel.EpisodeSeqs(eps), 64)
	if err != nil {
		b.Fatal(err)
	}
	b8, err := bun.ToInt8(hs, 2)
	if err != nil {
		b.Fatal(err)
	}
	p, err := b8.Predictor()
	if err != nil {
		b.Fatal(err)
	}
	if decode {
		benchDecode(b, b8, p, eps, obs, Options{Mix: true})
	} else {
		benchEncode(b, b8, p, eps, obs, Options{Mix: true})
	}
}

func BenchmarkEncodeMixManyInt8(b *testing.B)      { benchmarkManyInt8(b, false, false) }
func BenchmarkDecodeMixManyInt8(b *testing.B)      { benchmarkManyInt8(b, false, true) }
func BenchmarkEncodeMixManyDenseInt8(b *testing.B) { benchmarkManyInt8(b, true, false) }
func BenchmarkDecodeMixManyDenseInt8(b *testing.B) { benchmarkManyInt8(b, true, true) }
