// Command crossarch writes memory files of the shared test fixture
// (internal/fixture) and prints the sha256 of each, so that
// scripts/cross-arm64.sh can compare the output of an amd64 build with that of
// an arm64 build run under qemu: memowm's coding must be bit-exact across
// architectures.
//
// Before the files it prints the hashes of the inputs (the sim states, the
// fixture's codes and actions, the OPQ quantizer, the world model and the
// bundle, and what the quantizer's encoder and fit give on the states), so
// that when a file differs one can tell whether the difference starts in the
// inputs or in the coder. Every lossless file is also decoded and compared
// with its input.
//
// The fixture is built with floating point (sim, OPQ fit, weight
// initialisation), so two architectures need not build the same one. To test
// the coder alone, -save DIR writes the inputs (the bundle and the episodes)
// to DIR, and -load DIR writes the memory files from those saved inputs
// instead of building the fixture:
//
//	crossarch                 # build the fixture here, write files, print hashes
//	crossarch -save DIR       # build the fixture, save it to DIR, write files
//	crossarch -load DIR       # write files from the inputs saved in DIR
//
// -dir DIR keeps the memory files in DIR (default: a temporary folder,
// removed on exit).
package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/gob"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime"

	"github.com/memowm/memowm/codec"
	fixturepkg "github.com/memowm/memowm/internal/fixture"
	"github.com/memowm/memowm/internal/igemm"
	"github.com/memowm/memowm/model"
	"github.com/memowm/memowm/opq"
	"github.com/memowm/memowm/trajectory"
	"github.com/memowm/memowm/worldmodel"
)

func main() {
	dir := flag.String("dir", "", "folder for the files (default: a temporary folder, removed on exit)")
	save := flag.String("save", "", "save the fixture's bundle and episodes to this folder")
	load := flag.String("load", "", "write the files from the bundle and episodes saved in this folder")
	kernel := flag.String("kernel", "", "the int8 products' kernel (internal/igemm: go, avx2, avx512vnni; default the fastest)")
	flag.Parse()
	if *kernel != "" {
		if err := igemm.Use(*kernel); err != nil {
			fmt.Fprintln(os.Stderr, "crossarch:", err)
			os.Exit(2)
		}
	}
	if flag.NArg() > 0 || (*save != "" && *load != "") {
		fmt.Fprintln(os.Stderr, "usage: crossarch [-dir DIR] [-save DIR | -load DIR]")
		os.Exit(2)
	}
	if err := run(*dir, *save, *load); err != nil {
		fmt.Fprintln(os.Stderr, "crossarch:", err)
		os.Exit(1)
	}
}

func run(dir, save, load string) error {
	if dir == "" {
		d, err := os.MkdirTemp("", "crossarch-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(d)
		dir = d
	}
	fmt.Printf("arch %s/%s\n", runtime.GOOS, runtime.GOARCH)

	var (
		b      *model.Bundle
		eps    []*trajectory.Episode
		states [][][]float32 // the sim's states of eps, episode by episode
		err    error
	)
	if load != "" {
		fmt.Printf("inputs loaded from -load\n")
		if b, err = model.Load(filepath.Join(load, bundleFile)); err != nil {
			return err
		}
		if eps, states, err = loadEpisodes(filepath.Join(load, episodesFile)); err != nil {
			return err
		}
	} else {
		fmt.Printf("inputs built here\n")
		s, err := fixturepkg.Get()
		if err != nil {
			return err
		}
		states = s.States
		// The codec tests' fixture: the shared episodes plus one of a
		// single observation.
		one := &trajectory.Episode{ID: 99, Codes: s.Episodes[0].Codes[:1], Actions: []trajectory.Action{}}
		eps = append(append([]*trajectory.Episode(nil), s.Episodes...), one)
		if b, _, err = fixturepkg.Bundle(1, model.Policy{Kind: model.KeepAll}); err != nil {
			return err
		}
		if save != "" {
			if err := os.MkdirAll(save, 0o755); err != nil {
				return err
			}
			if err := b.Save(filepath.Join(save, bundleFile)); err != nil {
				return err
			}
			if err := saveEpisodes(filepath.Join(save, episodesFile), eps, states); err != nil {
				return err
			}
		}
	}
	// The predictor as cmd/memowm builds it for a bundle.
	p, err := worldmodel.NewCPU(b.Model, worldmodel.WithPrecision(b.Precision))
	if err != nil {
		return err
	}
	keep := model.Policy{Kind: model.KeepAll}
	rep := fixturepkg.Repeating(eps, p.Config().Subspaces)
	fmt.Printf("%-26s %s\n", "sim-states", hashStates(states))
	fmt.Printf("%-26s %s\n", "fixture-codes", hashCodes(eps))
	fmt.Printf("%-26s %s\n", "fixture-actions", hashActions(eps))
	fmt.Printf("%-26s %s\n", "repeating-codes", hashCodes(rep))
	fmt.Printf("%-26s %s\n", "opq", hashWriterTo(b.OPQ))
	fmt.Printf("%-26s %s\n", "worldmodel", hashWriterTo(b.Model))
	fmt.Printf("%-26s %s\n", "bundle", b.HashString())
	// The quantizer on these states: its encoder (inference) and its fit
	// (training, with the fixture's settings).
	fmt.Printf("%-26s %s\n", "opq-encode", encodeHash(b.OPQ, states))
	fmt.Printf("%-26s %s\n", "opq-fit", fitHash(b.OPQ, states))

	files := []fileSpec{
		{"plain.mwm", keep, codec.Options{}, eps},
		{"mix.mwm", keep, codec.Options{Mix: true}, eps},
		{"slotrepeat.mwm", keep, codec.Options{SlotRepeat: true}, eps},
		{"plain-repeating.mwm", keep, codec.Options{}, rep},
		{"mix-repeating.mwm", keep, codec.Options{Mix: true}, rep},
		{"slotrepeat-repeating.mwm", keep, codec.Options{SlotRepeat: true}, rep},
		// Lossy: which states are kept hangs on the model's entropies.
		{"minentropy.mwm", model.Policy{Kind: model.MinEntropy, MinEntropyQ16: 2 << 16}, codec.Options{}, eps},
	}
	if err := writeFiles(dir, b, p, files); err != nil {
		return err
	}
	return writeInt8(dir, b, eps, rep)
}

// writeInt8 makes the int8 profile's bundle from b, calibrated on every
// window of eps, and writes and checks files with it: the integer network
// and the files must be the same on every architecture and kernel.
func writeInt8(dir string, b *model.Bundle, eps, rep []*trajectory.Episode) error {
	cfg := b.Model.Config()
	hs, err := cfg.CalibrationHistories(worldmodel.EpisodeSeqs(eps), 64)
	if err != nil {
		return err
	}
	b8, err := b.ToInt8(hs, runtime.GOMAXPROCS(0))
	if err != nil {
		return err
	}
	fmt.Printf("%-26s %s (igemm kernel %s)\n", "int8-network", hashWriterTo(b8.Int8), igemm.Kernel())
	fmt.Printf("%-26s %s\n", "int8-bundle", b8.HashString())
	p, err := b8.Predictor()
	if err != nil {
		return err
	}
	keep := model.Policy{Kind: model.KeepAll}
	return writeFiles(dir, b8, p, []fileSpec{
		{"int8-plain.mwm", keep, codec.Options{}, eps},
		{"int8-mix.mwm", keep, codec.Options{Mix: true}, eps},
		{"int8-mix-repeating.mwm", keep, codec.Options{Mix: true}, rep},
	})
}

// fileSpec is one memory file to write: its name, policy, options and
// episodes.
type fileSpec struct {
	name   string
	policy model.Policy
	opt    codec.Options
	eps    []*trajectory.Episode
}

// writeFiles writes each file into dir with b and p, decodes the lossless
// ones and compares them with their episodes, and prints each file's
// sha256 and size.
func writeFiles(dir string, b *model.Bundle, p worldmodel.Predictor, files []fileSpec) error {
	for _, f := range files {
		path := filepath.Join(dir, f.name)
		if err := write(path, b, p, f.policy, f.opt, f.eps); err != nil {
			return fmt.Errorf("%s: %w", f.name, err)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if f.policy.Kind == model.KeepAll {
			if err := check(path, b, p, f.eps); err != nil {
				return fmt.Errorf("%s: %w", f.name, err)
			}
		}
		sum := sha256.Sum256(data)
		fmt.Printf("%-26s %s %d bytes\n", f.name, hex.EncodeToString(sum[:]), len(data))
	}
	return nil
}

func write(path string, b *model.Bundle, p worldmodel.Predictor, policy model.Policy, opt codec.Options, eps []*trajectory.Episode) error {
	w, err := codec.CreateWith(path, b, p, policy, opt)
	if err != nil {
		return err
	}
	if _, err := w.Write(eps); err != nil {
		w.Abort()
		return err
	}
	return w.Close()
}

// check decodes the file at path and compares every code with eps.
func check(path string, b *model.Bundle, p worldmodel.Predictor, eps []*trajectory.Episode) error {
	r, err := codec.Open(path)
	if err != nil {
		return err
	}
	defer r.Close()
	if err := r.CheckBundle(b); err != nil {
		return err
	}
	got, err := r.Decode(p, nil)
	if err != nil {
		return err
	}
	if len(got) != len(eps) {
		return fmt.Errorf("decoded %d episodes, wrote %d", len(got), len(eps))
	}
	for i, ep := range eps {
		if len(got[i].Codes) != len(ep.Codes) || len(got[i].Actions) != len(ep.Actions) {
			return fmt.Errorf("episode %d does not round-trip", ep.ID)
		}
		for t := range ep.Codes {
			if !bytes.Equal(got[i].Codes[t], ep.Codes[t]) {
				return fmt.Errorf("episode %d step %d does not round-trip", ep.ID, t)
			}
		}
	}
	return nil
}

// hashCodes is the sha256 of the episodes' IDs and codes.
func hashCodes(eps []*trajectory.Episode) string {
	h := sha256.New()
	for _, ep := range eps {
		fmt.Fprintf(h, "episode %d %d\n", ep.ID, len(ep.Codes))
		for _, z := range ep.Codes {
			h.Write(z)
		}
	}
	return hex.EncodeToString(h.Sum(nil))
}

// hashActions is the sha256 of the episodes' actions, every field, floats by
// their bits.
func hashActions(eps []*trajectory.Episode) string {
	h := sha256.New()
	for _, ep := range eps {
		fmt.Fprintf(h, "episode %d %d\n", ep.ID, len(ep.Actions))
		for _, a := range ep.Actions {
			fmt.Fprintf(h, "%d %t %08x %08x %t %08x %08x %q\n", a.Type, a.HasPos,
				math.Float32bits(a.X), math.Float32bits(a.Y), a.HasDelta,
				math.Float32bits(a.DX), math.Float32bits(a.DY), a.Payload)
		}
	}
	return hex.EncodeToString(h.Sum(nil))
}

const (
	bundleFile   = "fixture.bundle"
	episodesFile = "episodes.gob"
)

// saved is what -save writes besides the bundle: the episodes (codes and
// actions) and the sim states they were quantized from.
// saved is what -save writes: the episodes' codes and actions (gob cannot
// encode trajectory.Episode's compact form, which has no exported fields).
type saved struct {
	Episodes []savedEpisode
	States   [][][]float32
}

type savedEpisode struct {
	ID      int64
	Codes   [][]uint8
	Actions []trajectory.Action
}

func saveEpisodes(path string, eps []*trajectory.Episode, states [][][]float32) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	plain := make([]savedEpisode, len(eps))
	for i, ep := range eps {
		plain[i] = savedEpisode{ID: ep.ID, Codes: make([][]uint8, ep.Len()), Actions: ep.Actions}
		for t := range plain[i].Codes {
			plain[i].Codes[t] = ep.CodesAt(nil, t)
		}
	}
	if err := gob.NewEncoder(f).Encode(saved{plain, states}); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func loadEpisodes(path string) ([]*trajectory.Episode, [][][]float32, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	var s saved
	if err := gob.NewDecoder(f).Decode(&s); err != nil {
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(s.Episodes) == 0 || len(s.States) == 0 {
		return nil, nil, errors.New(path + ": no episodes")
	}
	eps := make([]*trajectory.Episode, len(s.Episodes))
	for i, ep := range s.Episodes {
		if ep.Actions == nil {
			ep.Actions = []trajectory.Action{} // gob drops empty slices
		}
		eps[i] = &trajectory.Episode{ID: ep.ID, Codes: ep.Codes, Actions: ep.Actions}
	}
	return eps, s.States, nil
}

// encodeHash is the sha256 of q's codes of every state.
func encodeHash(q *opq.Quantizer, states [][][]float32) string {
	h := sha256.New()
	for _, ep := range states {
		for _, st := range ep {
			z, err := q.Encode(st)
			if err != nil {
				return "error: " + err.Error()
			}
			h.Write(z)
		}
	}
	return hex.EncodeToString(h.Sum(nil))
}

// fitHash is the hash of a quantizer fit on the states as internal/fixture
// fits its own (the default settings with q's shape and codewords).
func fitHash(q *opq.Quantizer, states [][][]float32) string {
	var all [][]float32
	for _, ep := range states {
		all = append(all, ep...)
	}
	cfg := opq.DefaultConfig()
	cfg.Shape, cfg.Codewords = q.Shape(), q.Codewords()
	fit, err := opq.Fit(all, cfg)
	if err != nil {
		return "error: " + err.Error()
	}
	return hashWriterTo(fit)
}

// hashStates is the sha256 of the states' float32 bits, little-endian.
func hashStates(states [][][]float32) string {
	h := sha256.New()
	var buf [4]byte
	for _, ep := range states {
		for _, st := range ep {
			for _, v := range st {
				binary.LittleEndian.PutUint32(buf[:], math.Float32bits(v))
				h.Write(buf[:])
			}
		}
	}
	return hex.EncodeToString(h.Sum(nil))
}

// hashWriterTo is the sha256 of what w writes, or the error.
func hashWriterTo(w io.WriterTo) string {
	h := sha256.New()
	if _, err := w.WriteTo(h); err != nil {
		return "error: " + err.Error()
	}
	return hex.EncodeToString(h.Sum(nil))
}
