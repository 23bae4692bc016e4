package main

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"

	"github.com/memowm/memowm/model"
	"github.com/memowm/memowm/worldmodel"
)

// weightsSubVerbs are the sub-verbs of 'memowm weights', for completion.
var weightsSubVerbs = []string{"export", "import"}

// runWeights dispatches 'weights export' and 'weights import'.
func runWeights(args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "-help" {
		fmt.Fprint(stdout, "Usage: memowm weights export --model BUNDLE --out W.safetensors [--json]\n"+
			"       memowm weights import --model BUNDLE --in W.safetensors --out NEW.mwb [--preset P] [--json]\n\n"+
			"Moves a bundle's world-model weights in and out as safetensors, the tensor file\n"+
			"of PyTorch, JAX and NumPy: one F32 tensor per tensor of the layout, named as in\n"+
			"docs/world-model.md, the configuration in the metadata (\"memowm.config\").\n"+
			"  weights export   writes the weights of a bundle's world model\n"+
			"  weights import   writes a copy of a bundle with the weights of a safetensors file\n"+
			"'memowm weights export -h' and 'memowm weights import -h' show their flags.\n")
		if len(args) == 0 {
			return usagef("weights needs export or import")
		}
		return nil
	}
	switch args[0] {
	case "export":
		return runWeightsExport(args[1:], stdout, stderr)
	case "import":
		return runWeightsImport(args[1:], stdout, stderr)
	}
	return usagef("weights %q: want export or import", args[0])
}

// stTensor is one tensor of an exported file, for --json.
type stTensor struct {
	Name        string   `json:"name"`
	Dtype       string   `json:"dtype"`
	Shape       []int    `json:"shape"`
	DataOffsets [2]int64 `json:"data_offsets"`
	SHA256      string   `json:"sha256"`
}

// exportedTensors lists m's tensors as WriteSafetensors writes them, each
// with the SHA-256 of its bytes.
func exportedTensors(m *worldmodel.Model) []stTensor {
	p := m.Params()
	out := make([]stTensor, 0, len(p.Tensors))
	for _, t := range p.Tensors {
		h := sha256.New()
		var b [4]byte
		for _, v := range p.Data[t.Off : t.Off+t.Size()] {
			binary.LittleEndian.PutUint32(b[:], math.Float32bits(v))
			h.Write(b[:])
		}
		out = append(out, stTensor{Name: worldmodel.SafetensorsName(t.Name), Dtype: "F32", Shape: t.Shape,
			DataOffsets: [2]int64{4 * int64(t.Off), 4 * int64(t.Off+t.Size())}, SHA256: hex.EncodeToString(h.Sum(nil))})
	}
	return out
}

// checkSafetensorsName refuses, as a usage error, a path flag whose
// extension is not .safetensors.
func checkSafetensorsName(flag, path string) error {
	if !strings.EqualFold(filepath.Ext(path), ".safetensors") {
		return usagef("%s %s: a safetensors file is named .safetensors", flag, path)
	}
	return nil
}

func runWeightsExport(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("weights export", "--model BUNDLE --out W.safetensors [--json]",
		"Writes the weights of a bundle's world model as a safetensors file: one F32\n"+
			"tensor per tensor of the layout, in layout order, named and shaped as in\n"+
			"docs/world-model.md (matrices are (in, out)); the metadata holds the\n"+
			"configuration (\"memowm.config\") and the format version. NumPy, PyTorch\n"+
			"and JAX read it; 'memowm weights import' reads it back bit for bit.", stdout)
	bundlePath := fs.String("model", "", "model bundle whose world model to export (required)")
	out := fs.String("out", "", "safetensors file to write, named .safetensors (required)")
	force := fs.Bool("force", false, forceHelp)
	asJSON := fs.Bool("json", false, "print a JSON summary with every tensor's name, shape, offsets and SHA-256")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 0 {
		return usagef("unexpected argument %q", pos[0])
	}
	if *bundlePath == "" || *out == "" {
		return usagef("--model and --out are required")
	}
	if err := checkOutput(*out, outWeights, *force, input{"--model", *bundlePath}); err != nil {
		return err
	}
	if err := checkSafetensorsName("--out", *out); err != nil {
		return err
	}
	b, err := model.Load(*bundlePath)
	if err != nil {
		return nameFile(*bundlePath, err)
	}
	watchOutputs(stderr, "weights export", *out)
	m := b.Model
	if err := m.SaveSafetensors(*out); err != nil {
		return err
	}
	sum, size, err := fileSHA256(*out)
	if err != nil {
		return err
	}
	cfg := m.Config()
	ts := exportedTensors(m)
	if *asJSON {
		return writeJSON(stdout, map[string]any{
			"model": *bundlePath, "bundle_sha256": b.HashString(), "out": *out, "file_bytes": size, "sha256": sum,
			"preset": cfg.Preset, "params": cfg.NumParams(), "config": cfg, "tensors": len(ts), "per_tensor": ts,
		})
	}
	fmt.Fprintf(stdout, "wrote %s (%s): world model %s of %s, %s parameters in %d F32 tensors\n",
		*out, humanBytes(size), presetLabel(cfg), *bundlePath, commas(int64(cfg.NumParams())), len(ts))
	fmt.Fprintf(stdout, "sha256        %s\n", sum)
	return nil
}

func runWeightsImport(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("weights import", "--model BUNDLE --in W.safetensors --out NEW.mwb [--preset P] [--json]",
		"Writes a copy of a bundle whose world-model weights are those of a safetensors\n"+
			"file (its quantizer, reader, precision and policy kept). The tensors may come\n"+
			"in any order, in F32 (bit for bit), F16 or BF16 (widened exactly) or F64\n"+
			"(rounded to the nearest float32); every name, shape and value is checked\n"+
			"against the bundle's world model, and a file whose \"memowm.config\" differs\n"+
			"from it is refused. The new bundle has a new SHA-256 and no training record\n"+
			"(the weights were trained elsewhere); memory files written with the old\n"+
			"bundle decode only with the old one.", stdout)
	bundlePath := fs.String("model", "", "model bundle to copy (required)")
	in := fs.String("in", "", "safetensors file with the weights (required)")
	out := fs.String("out", "", "new bundle to write, .mwb (required)")
	force := fs.Bool("force", false, forceHelp)
	preset := fs.String("preset", "", "architecture of a file without \"memowm.config\", a preset that must be the bundle's (default: the bundle's configuration)")
	asJSON := fs.Bool("json", false, "print a JSON summary")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 0 {
		return usagef("unexpected argument %q", pos[0])
	}
	if *bundlePath == "" || *in == "" || *out == "" {
		return usagef("--model, --in and --out are required")
	}
	if err := checkSafetensorsName("--in", *in); err != nil {
		return err
	}
	if err := checkOutput(*out, outBundle, *force, input{"--model", *bundlePath}, input{"--in", *in}); err != nil {
		return err
	}
	want := worldmodel.Config{}
	if *preset != "" {
		if want, err = worldmodel.Preset(*preset); err != nil {
			return usagef("--preset: %v", err)
		}
	}
	if _, err := os.Stat(*in); err != nil {
		return fmt.Errorf("--in: %w", err)
	}
	b, err := model.Load(*bundlePath)
	if err != nil {
		return nameFile(*bundlePath, err)
	}
	have := b.Model.Config()
	configFrom := "bundle"
	if *preset != "" {
		if d := want.ArchDiff(&have); len(d) > 0 {
			return fmt.Errorf("--preset %s is not the architecture of the world model of %s (%s): %s",
				*preset, *bundlePath, presetLabel(have), strings.Join(d, "; "))
		}
		configFrom = "preset"
	} else {
		want = have
	}
	m, info, err := worldmodel.LoadSafetensors(*in, &want)
	if errors.Is(err, worldmodel.ErrConfig) {
		return fmt.Errorf("%s does not fit the world model of %s: %w", *in, *bundlePath, err)
	}
	if err != nil {
		return nameFile(*in, err)
	}
	if info.ConfigInFile {
		configFrom = "file"
	}
	fileSum, _, err := fileSHA256(*in)
	if err != nil {
		return err
	}
	// The bundle records where its weights came from: trained elsewhere,
	// not by memowm, and not the weights of the bundle they went into.
	nb := &model.Bundle{OPQ: b.OPQ, Model: m, Profile: worldmodel.ProfileF32, Precision: b.Precision, Policy: b.Policy, Reader: b.Reader,
		Training: &model.Training{Imported: fileSum}}
	watchOutputs(stderr, "weights import", *out)
	if err := nb.Save(*out); err != nil {
		return err
	}
	st, err := os.Stat(*out)
	if err != nil {
		return err
	}
	changed := 0
	for i, v := range m.Params().Data {
		if math.Float32bits(v) != math.Float32bits(b.Model.Params().Data[i]) {
			changed++
		}
	}
	cfg := m.Config()
	if !b.Policy.Lossless() {
		fmt.Fprintf(stderr, "weights import: warning: %s keeps the %s policy of %s, calibrated with its previous weights; recalibrate it ('memowm fit --stage risk', then '--stage lambda')\n",
			*out, b.Policy.Kind, *bundlePath)
	}
	if *asJSON {
		return writeJSON(stdout, map[string]any{
			"model": *bundlePath, "in": *in, "out": *out, "file_bytes": st.Size(), "bundle_sha256": nb.HashString(),
			"previous_bundle_sha256": b.HashString(), "preset": cfg.Preset, "params": cfg.NumParams(),
			"tensors": info.Tensors, "dtypes": info.Dtypes, "config_from": configFrom, "metadata": info.Metadata,
			"changed_params": changed, "training": nb.Training, "previous_training": b.Training,
		})
	}
	fmt.Fprintf(stdout, "wrote %s (%s): %s with the weights of %s\n", *out, humanBytes(st.Size()), *bundlePath, *in)
	fmt.Fprintf(stdout, "world model   %s, %s parameters in %d tensors (%s); configuration from %s\n",
		presetLabel(cfg), commas(int64(cfg.NumParams())), info.Tensors, dtypeList(info.Dtypes), configSource(configFrom))
	fmt.Fprintf(stdout, "weights       %s of %s parameters differ from those of %s\n",
		commas(int64(changed)), commas(int64(cfg.NumParams())), *bundlePath)
	fmt.Fprintf(stdout, "sha256        %s (was %s)\n", nb.HashString(), b.HashString())
	fmt.Fprintf(stdout, "training      %s (%s recorded: %s)\n", nb.Training, *bundlePath, b.Training)
	return nil
}

// presetLabel names a configuration's preset, or says it has none.
func presetLabel(c worldmodel.Config) string {
	if c.Preset == "" {
		return "(custom configuration)"
	}
	return c.Preset
}

func configSource(from string) string {
	switch from {
	case "file":
		return "the file's memowm.config"
	case "preset":
		return "--preset"
	}
	return "the bundle"
}

// dtypeList is "F32" or "59 F16, 2 F32", in a fixed order.
func dtypeList(n map[string]int) string {
	var parts []string
	for _, d := range []string{"F32", "F16", "BF16", "F64"} {
		if n[d] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n[d], d))
		}
	}
	if len(parts) == 1 {
		return strings.SplitN(parts[0], " ", 2)[1]
	}
	return strings.Join(parts, ", ")
}

// fileSHA256 returns the SHA-256 of the file at path, in hex, and its size.
func fileSHA256(path string) (string, int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", 0, err
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(h, f)
	if err != nil {
		return "", 0, fmt.Errorf("%s: %w", path, err)
	}
	return hex.EncodeToString(h.Sum(nil)), n, nil
}
