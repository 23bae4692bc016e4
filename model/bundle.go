package model

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"

	"github.com/memowm/memowm/internal/atomicfile"
	"github.com/memowm/memowm/opq"
	"github.com/memowm/memowm/reader"
	"github.com/memowm/memowm/worldmodel"
)

// Magic starts every bundle file. Version is the format of a bundle in the
// f32 profile; VersionInt8 adds the int8 network after the reader.
const (
	Magic       = "\x89MWB\r\n\x1a\n"
	Version     = 1
	VersionInt8 = 2
)

// ErrFormat is wrapped by every error about data that is not a valid bundle.
var ErrFormat = errors.New("not a valid model bundle")

// maxHeader bounds the JSON header.
const maxHeader = 1 << 20

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Bundle is everything a writer and its decoder share.
type Bundle struct {
	OPQ     *opq.Quantizer
	Model   *worldmodel.Model
	Profile string // inference profile: worldmodel.ProfileF32 or ProfileInt8
	// Int8 is the integer network of the int8 profile (Profile "int8"),
	// made from Model by worldmodel.CalibrateInt8; nil in the f32 profile.
	Int8      *worldmodel.Int8Model
	Precision uint // log2 of every frequency table's total
	Policy    Policy
	// Reader is the frozen reader that defines answer loss (nil until the
	// reader stage ran). It calibrates the policy; decoders never need it.
	Reader reader.Builtin
	// Training records how far the world model's training run went (nil:
	// not recorded, as in bundles written before it was). See Training and
	// CheckTrained.
	Training *Training
	// Baselines are the gating baselines calibrated beside lambda (nil
	// unless 'fit --stage lambda --baselines' ran): for bench.
	Baselines []Baseline

	hash [32]byte // SHA-256 of the file bytes; set by Bytes, Read, Save, Load
	// legacySeconds: the header held the training time (a bundle written
	// before the provenance sidecar); Bytes writes it back there, so the
	// bundle keeps its bytes.
	legacySeconds bool
}

// fileHeader is the bundle's JSON header; its field names are part of the
// format.
type fileHeader struct {
	Profile   string `json:"profile"`
	Precision uint   `json:"precision"`
	Policy    Policy `json:"policy"`
	Preset    string `json:"preset,omitempty"` // informational
	// Training is how far the world model was trained; absent in bundles
	// written before it was recorded (their bytes and hash are unchanged).
	// Its "seconds" and "prior_seconds" appear only in bundles written
	// before the provenance sidecar took them.
	Training *Training `json:"training,omitempty"`
	// Baselines are the gating baselines calibrated beside lambda; absent
	// unless 'fit --stage lambda --baselines' ran.
	Baselines []Baseline `json:"baselines,omitempty"`
}

// Baseline is a gating baseline's parameter calibrated beside lambda on the
// same questions (fit --stage lambda --baselines): bench runs each on its
// episodes next to the bundle's policy. It is not part of the policy (a
// memory file never uses it).
type Baseline struct {
	Family    string  `json:"family"`               // calib.Families: static-e, uniform-v, uncertainty or random
	Param     float64 `json:"param"`                // its parameter at |D| <= epsilon on the calibration set
	ErrorRate float64 `json:"error_rate,omitempty"` // static-e's single error rate
}

// Check reports whether the parts of b fit together.
func (b *Bundle) Check() error {
	if b.OPQ == nil || b.Model == nil {
		return fmt.Errorf("model: a bundle needs a quantizer and a world model")
	}
	cfg := b.Model.Config()
	s := b.OPQ.Shape()
	if b.Reader != nil {
		if slots, dim := b.Reader.Shape(); slots != s.Slots || dim != s.Dim {
			return fmt.Errorf("model: the reader reads %dx%d states, the quantizer makes %v", slots, dim, s)
		}
	}
	if s.Slots != cfg.Slots || b.OPQ.Subspaces() != cfg.Subspaces || b.OPQ.Codewords() != cfg.Codewords {
		return fmt.Errorf("model: the quantizer (%d slots x %d subspaces, %d codewords) does not fit the world model (%d x %d, %d)",
			s.Slots, b.OPQ.Subspaces(), b.OPQ.Codewords(), cfg.Slots, cfg.Subspaces, cfg.Codewords)
	}
	switch b.Profile {
	case worldmodel.ProfileF32:
		if b.Int8 != nil {
			return fmt.Errorf("model: a bundle in the f32 profile carries an int8 network")
		}
	case worldmodel.ProfileInt8:
		if b.Int8 == nil {
			return fmt.Errorf("model: a bundle in the int8 profile has no int8 network")
		}
		if b.Int8.Model() != b.Model {
			return fmt.Errorf("model: the int8 network was made from another world model")
		}
	default:
		return fmt.Errorf("model: unknown inference profile %q (this build runs %q and %q)", b.Profile, worldmodel.ProfileF32, worldmodel.ProfileInt8)
	}
	if cfg.Profile != "" && cfg.Profile != worldmodel.ProfileF32 {
		return fmt.Errorf("model: the weights are for profile %q, the bundle's float model must be %q", cfg.Profile, worldmodel.ProfileF32)
	}
	if b.Precision < 8 || b.Precision > 28 {
		return fmt.Errorf("model: precision %d is outside [8, 28]", b.Precision)
	}
	if err := b.Training.check(); err != nil {
		return err
	}
	if err := b.Policy.Validate(); err != nil {
		return err
	}
	return b.Policy.CheckCoords(cfg.Coords())
}

// FormatVersion is the file format b is written in: Version, or
// VersionInt8 when it carries an int8 network.
func (b *Bundle) FormatVersion() int {
	if b.Int8 != nil {
		return VersionInt8
	}
	return Version
}

// ToInt8 returns b converted to the int8 profile: the same parts, with the
// integer network worldmodel.CalibrateInt8 makes from b's world model and
// the calibration histories hs, and its hash set. b must be in the f32
// profile.
func (b *Bundle) ToInt8(hs []worldmodel.History, threads int) (*Bundle, error) {
	if b.Profile != worldmodel.ProfileF32 {
		return nil, fmt.Errorf("model: the bundle is in the %s profile already: convert the f32 bundle it was made from", b.Profile)
	}
	q, err := worldmodel.CalibrateInt8(b.Model, hs, threads)
	if err != nil {
		return nil, err
	}
	nb := *b
	nb.Profile, nb.Int8 = worldmodel.ProfileInt8, q
	if _, err := nb.Bytes(); err != nil {
		return nil, err
	}
	return &nb, nil
}

// Predictor returns the CPU backend of b's profile: worldmodel.CPU for
// f32, worldmodel.Int8CPU for int8, at b's precision.
func (b *Bundle) Predictor(opts ...worldmodel.Option) (worldmodel.Predictor, error) {
	opts = append([]worldmodel.Option{worldmodel.WithPrecision(b.Precision)}, opts...)
	if b.Profile == worldmodel.ProfileInt8 {
		if b.Int8 == nil {
			return nil, fmt.Errorf("model: a bundle in the int8 profile has no int8 network")
		}
		return worldmodel.NewInt8CPU(b.Int8, opts...)
	}
	return worldmodel.NewCPU(b.Model, opts...)
}

// header is b's JSON header. It holds nothing of when, where or how fast
// the model was trained: the training time goes to the provenance sidecar
// (except in bundles that held it before, which keep their bytes).
func (b *Bundle) header() fileHeader {
	tr := b.Training
	if tr != nil && !b.legacySeconds && (tr.Seconds != 0 || tr.PriorSeconds != 0) {
		c := *tr
		c.Seconds, c.PriorSeconds = 0, 0
		tr = &c
	}
	return fileHeader{Profile: b.Profile, Precision: b.Precision, Policy: b.Policy, Preset: b.Model.Config().Preset, Training: tr, Baselines: b.Baselines}
}

// WriteTo writes b in the bundle format and sets its hash.
func (b *Bundle) WriteTo(w io.Writer) (int64, error) {
	data, err := b.Bytes()
	if err != nil {
		return 0, err
	}
	n, err := w.Write(data)
	if err != nil {
		return int64(n), fmt.Errorf("model: %w", err)
	}
	return int64(n), nil
}

// Bytes returns b's file bytes and sets its hash.
func (b *Bundle) Bytes() ([]byte, error) {
	if err := b.Check(); err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	buf.WriteString(Magic)
	binary.Write(&buf, binary.LittleEndian, uint32(b.FormatVersion()))
	hdr, err := json.Marshal(b.header())
	if err != nil {
		return nil, fmt.Errorf("model: %w", err)
	}
	binary.Write(&buf, binary.LittleEndian, uint32(len(hdr)))
	buf.Write(hdr)
	parts := []io.WriterTo{b.OPQ, b.Model}
	if b.Reader != nil {
		parts = append(parts, b.Reader)
	}
	for _, part := range parts {
		var p bytes.Buffer
		if _, err := part.WriteTo(&p); err != nil {
			return nil, fmt.Errorf("model: %w", err)
		}
		binary.Write(&buf, binary.LittleEndian, uint64(p.Len()))
		buf.Write(p.Bytes())
	}
	if b.Reader == nil {
		binary.Write(&buf, binary.LittleEndian, uint64(0))
	}
	if b.Int8 != nil {
		var p bytes.Buffer
		if _, err := b.Int8.WriteTo(&p); err != nil {
			return nil, fmt.Errorf("model: %w", err)
		}
		binary.Write(&buf, binary.LittleEndian, uint64(p.Len()))
		buf.Write(p.Bytes())
	}
	binary.Write(&buf, binary.LittleEndian, crc32.Checksum(buf.Bytes(), castagnoli))
	b.hash = sha256.Sum256(buf.Bytes())
	return buf.Bytes(), nil
}

// Hash is the SHA-256 of the bundle's file bytes, its identity. It is zero
// until the bundle was read or written.
func (b *Bundle) Hash() [32]byte { return b.hash }

// HashString is Hash in hex.
func (b *Bundle) HashString() string { return hex.EncodeToString(b.hash[:]) }

// Save writes b to path through a temporary file that is synced and
// renamed, then, when b's training record has a time or a host, the
// provenance sidecar ProvenancePath(path) that records them for this
// bundle's hash (WriteTo and Bytes write the bundle alone).
func (b *Bundle) Save(path string) error {
	data, err := b.Bytes()
	if err != nil {
		return err
	}
	err = atomicfile.Write(path, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
	if err != nil {
		return fmt.Errorf("model: %w", err)
	}
	if err := b.saveProvenance(path); err != nil {
		return fmt.Errorf("model: the bundle is written, its provenance record is not: %w", err)
	}
	return nil
}
