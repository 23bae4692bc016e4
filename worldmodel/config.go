package worldmodel

import (
	"fmt"
	"sort"
)

// ProfileF32 is the float32 reference inference profile: the order of every
// reduction is fixed (see the package doc and internal/f32), products and sums
// are rounded separately and the transcendental functions are this package's
// own. Any backend that claims it gives the same bits.
const ProfileF32 = "f32"

// Config is the architecture of a world model. Its JSON form is stored in
// weights files; field names are part of the file format.
//
// The token width is Width() = Subspaces * CodeDim: the output logits are tied
// to the code embeddings, so a slot's hidden state splits into one CodeDim
// slice per subspace.
type Config struct {
	// Preset names the preset the config came from ("" for a custom one).
	Preset string `json:"preset"`
	// Profile is the inference profile the weights are meant for: "f32".
	Profile string `json:"profile"`

	// The state interface (the OPQ geometry) and the history window.
	MaxHistory int `json:"max_history"` // states in the window (16)
	Slots      int `json:"slots"`       // slots per state (32)
	Subspaces  int `json:"subspaces"`   // subspaces per slot (32)
	Codewords  int `json:"codewords"`   // codewords per subspace, C (64, at most 256)
	CodeDim    int `json:"code_dim"`    // embedding width of one code (8)

	// The Transformer.
	Layers int `json:"layers"` // blocks (12)
	Heads  int `json:"heads"`  // attention heads; Width() % Heads == 0 (8)
	MLP    int `json:"mlp"`    // MLP hidden width (4096)

	// The action encoder.
	ActionTypes   int `json:"action_types"`   // action kinds (17)
	CoordBins     int `json:"coord_bins"`     // bins per absolute coordinate, plus one "missing" bin (64)
	ActionDim     int `json:"action_dim"`     // width of the type, x, y and delta features (32)
	ByteDim       int `json:"byte_dim"`       // payload byte embedding width (16)
	PayloadHidden int `json:"payload_hidden"` // payload GRU state width (64)
	MaxPayload    int `json:"max_payload"`    // payload bytes the GRU reads (40)

	// Tasks is the number of task embeddings (1: the paper's model has one
	// task identity); inference always uses task 0.
	Tasks int `json:"tasks"`

	// Dropout is the training dropout rate; inference never applies it.
	Dropout float64 `json:"dropout"`
}

// Width is the token width: Subspaces * CodeDim.
func (c *Config) Width() int { return c.Subspaces * c.CodeDim }

// Coords is the number of coordinates of a state: Slots * Subspaces.
func (c *Config) Coords() int { return c.Slots * c.Subspaces }

// HeadDim is the width of one attention head.
func (c *Config) HeadDim() int { return c.Width() / c.Heads }

// ActionWidth is the width of the concatenated action features before the
// projection: type, x, y and delta (ActionDim each) and the GRU state.
func (c *Config) ActionWidth() int { return 4*c.ActionDim + c.PayloadHidden }

// Limits that Validate enforces, so that a hostile weights file header cannot
// ask for absurd allocations.
const (
	maxDim    = 1 << 14
	maxLayers = 256
	maxParams = 1 << 28 // 1 GiB of float32
)

// Validate checks that the configuration describes a model this package can
// build. The error wraps ErrConfig.
func (c *Config) Validate() error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: %s", ErrConfig, fmt.Sprintf(format, args...))
	}
	if c.Profile != ProfileF32 {
		return fmt.Errorf("%w %q (this build has %q)", ErrProfile, c.Profile, ProfileF32)
	}
	dims := []struct {
		name string
		v    int
	}{
		{"max_history", c.MaxHistory}, {"slots", c.Slots}, {"subspaces", c.Subspaces},
		{"codewords", c.Codewords}, {"code_dim", c.CodeDim}, {"layers", c.Layers},
		{"heads", c.Heads}, {"mlp", c.MLP}, {"action_types", c.ActionTypes},
		{"coord_bins", c.CoordBins}, {"action_dim", c.ActionDim}, {"byte_dim", c.ByteDim},
		{"payload_hidden", c.PayloadHidden}, {"max_payload", c.MaxPayload}, {"tasks", c.Tasks},
	}
	for _, d := range dims {
		if d.v < 1 || d.v > maxDim {
			return bad("%s = %d is outside [1, %d]", d.name, d.v, maxDim)
		}
	}
	if c.Codewords < 2 || c.Codewords > 256 {
		return bad("codewords = %d is outside [2, 256] (codes are bytes)", c.Codewords)
	}
	if c.Layers > maxLayers {
		return bad("layers = %d is more than %d", c.Layers, maxLayers)
	}
	if c.Width() > maxDim {
		return bad("width %d = subspaces x code_dim is more than %d", c.Width(), maxDim)
	}
	if c.Width()%c.Heads != 0 {
		return bad("width %d is not a multiple of heads = %d", c.Width(), c.Heads)
	}
	if c.ActionTypes > 256 {
		return bad("action_types = %d is more than 256", c.ActionTypes)
	}
	if !(c.Dropout >= 0 && c.Dropout < 1) {
		return bad("dropout = %g is outside [0, 1)", c.Dropout)
	}
	if n := c.countParams(); n > maxParams {
		return bad("%d parameters is more than %d", n, maxParams)
	}
	return nil
}

// The paper's state interface: 16 states of 32 slots x 32 subspaces, 64
// codewords, and its action encoder.
func paperBase() Config {
	return Config{
		Profile: ProfileF32, MaxHistory: 16, Slots: 32, Subspaces: 32, Codewords: 64,
		CodeDim: 8, Layers: 12, Heads: 8, MLP: 4096,
		ActionTypes: 17, CoordBins: 64, ActionDim: 32, ByteDim: 16, PayloadHidden: 64,
		MaxPayload: 40, Tasks: 1, Dropout: 0.1,
	}
}

// presets are the named configurations. All share the paper's state
// interface (so any of them can serve the same OPQ codes) and span the
// capacity sweep from about 0.15M to 29M parameters.
var presets = map[string]func() Config{
	// tiny: tests and seconds-long training. The tied code embedding and
	// the output bias alone are 2 x 65,536 parameters at CodeDim 1.
	"tiny": func() Config {
		c := paperBase()
		c.CodeDim, c.Layers, c.Heads, c.MLP = 1, 2, 2, 128
		c.ActionDim, c.ByteDim, c.PayloadHidden = 8, 8, 16
		return c
	},
	// small: about 1M.
	"small": func() Config {
		c := paperBase()
		c.CodeDim, c.Layers, c.Heads, c.MLP = 4, 3, 4, 512
		c.ActionDim, c.ByteDim, c.PayloadHidden = 16, 16, 32
		return c
	},
	// base: about 5M, the paper's width with fewer, narrower blocks.
	"base": func() Config {
		c := paperBase()
		c.Layers, c.MLP = 6, 1024
		return c
	},
	// medium: about 10M.
	"medium": func() Config {
		c := paperBase()
		c.Layers, c.MLP = 12, 1024
		return c
	},
	// paper: the paper's model, 29,092,096 parameters.
	"paper": paperBase,
}

// Preset returns the named configuration. Presets are tiny, small, base,
// medium and paper; see PresetNames.
func Preset(name string) (Config, error) {
	f, ok := presets[name]
	if !ok {
		return Config{}, fmt.Errorf("%w: unknown preset %q (have %v)", ErrConfig, name, PresetNames())
	}
	c := f()
	c.Preset = name
	return c, nil
}

// presetLR is each preset's default peak learning rate: the rates the
// presets' documented runs trained with (docs/world-model.md); larger
// models take smaller steps. base moved from 1e-3 to 2e-3 after a
// measured check: 130 bits/transition lower on its training batches at
// steps 1,000 and 1,500 (docs/world-model.md).
var presetLR = map[string]float64{"tiny": 3e-3, "small": 2e-3, "base": 2e-3, "medium": 1e-3, "paper": 3e-4}

// fallbackLR is the default peak learning rate of a configuration that is
// not a preset.
const fallbackLR = 3e-4

// DefaultLR returns the default peak learning rate for training c: its
// preset's (tiny 3e-3, small and base 2e-3, medium 1e-3, paper 3e-4), or
// 3e-4 for a configuration that is not a preset.
func (c *Config) DefaultLR() float64 {
	if lr, ok := presetLR[c.Preset]; ok {
		return lr
	}
	return fallbackLR
}

// PresetNames lists the presets from the smallest to the largest.
func PresetNames() []string {
	names := make([]string, 0, len(presets))
	for n := range presets {
		names = append(names, n)
	}
	sort.Slice(names, func(i, j int) bool {
		a, _ := Preset(names[i])
		b, _ := Preset(names[j])
		return a.countParams() < b.countParams()
	})
	return names
}
