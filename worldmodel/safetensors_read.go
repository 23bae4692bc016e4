package worldmodel

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"

	"github.com/memowm/memowm/internal/fileread"
)

// SafetensorsInfo describes a safetensors file that ReadSafetensors read.
type SafetensorsInfo struct {
	// HeaderBytes is the length of the JSON header.
	HeaderBytes int64 `json:"header_bytes"`
	// Tensors is the number of tensors.
	Tensors int `json:"tensors"`
	// Dtypes counts the tensors of each dtype ("F32": 59).
	Dtypes map[string]int `json:"dtypes"`
	// ConfigInFile is set when the configuration came from the file's
	// SafetensorsConfigKey metadata, unset when it was the caller's.
	ConfigInFile bool `json:"config_in_file"`
	// Metadata is the file's "__metadata__" (nil when it has none).
	Metadata map[string]string `json:"metadata,omitempty"`
}

// stDtypes are the dtypes ReadSafetensors reads, by their size in bytes.
var stDtypes = map[string]int{"F32": 4, "F16": 2, "BF16": 2, "F64": 8}

// ReadSafetensors reads a safetensors file of size bytes from r (size < 0:
// unknown; then it reads exactly the bytes the header describes) and
// returns the model and what the file held.
//
// The configuration is the file's SafetensorsConfigKey metadata when it has
// one; want, when not nil, is the configuration the file must have: a file
// with its own must match it in every field but preset and dropout (the
// model keeps the file's), and a file without one is read as want. A file
// without the metadata and a nil want is an error wrapping ErrConfig. See
// the format comment in safetensors.go for what is checked. Errors wrap
// ErrFormat (truncation also io.ErrUnexpectedEOF), ErrVersion, ErrConfig or
// ErrProfile and name the tensor or field that is wrong; ReadSafetensors
// never panics, and memory grows with the bytes actually read (the header
// is checked against size, and the tensors' values are kept as they arrive).
func ReadSafetensors(r io.Reader, size int64, want *Config) (*Model, *SafetensorsInfo, error) {
	if size >= 0 {
		return readSafetensors(r, size, true, want)
	}
	return readSafetensors(r, fileread.Available(r), false, want)
}

// LoadSafetensors reads the safetensors file at path (see ReadSafetensors).
func LoadSafetensors(path string, want *Config) (*Model, *SafetensorsInfo, error) {
	type result struct {
		m    *Model
		info *SafetensorsInfo
	}
	res, err := fileread.Load(path, func(r io.Reader, avail int64) (result, error) {
		m, info, err := readSafetensors(r, avail, avail >= 0, want)
		return result{m, info}, err
	})
	var oe *fileread.OpenError
	switch {
	case errors.As(err, &oe):
		return nil, nil, fmt.Errorf("worldmodel: %w", oe.Err)
	case errors.Is(err, fileread.ErrTrailing):
		return nil, nil, fmt.Errorf("%s: %w: safetensors: data after the end of the tensors", path, ErrFormat)
	case err != nil:
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	return res.m, res.info, nil
}

// stTensor pairs a layout tensor with its header entry.
type stTensor struct {
	t *Tensor
	e *stEntry
}

// readSafetensors is ReadSafetensors of a stream that can give avail more
// bytes (-1: unknown); exact says that avail is the file's size.
func readSafetensors(r io.Reader, avail int64, exact bool, want *Config) (*Model, *SafetensorsInfo, error) {
	var n8 [8]byte
	if _, err := io.ReadFull(r, n8[:]); err != nil {
		return nil, nil, stRead(err, "the header length")
	}
	n := binary.LittleEndian.Uint64(n8[:])
	if n > maxSafetensorsHeader {
		return nil, nil, stFormat("a header of %d bytes is more than the limit of %d", n, maxSafetensorsHeader)
	}
	if avail >= 0 && n > uint64(max(avail-8, 0)) {
		return nil, nil, fmt.Errorf("%w: safetensors: a header of %d bytes, only %d bytes follow the length: %w", ErrFormat, n, max(avail-8, 0), io.ErrUnexpectedEOF)
	}
	hdr, err := readBytes(r, int(n), avail >= 0)
	if err != nil {
		return nil, nil, stRead(err, "the header")
	}
	h, err := parseSafetensorsHeader(hdr)
	if err != nil {
		return nil, nil, err
	}
	cfg, inFile, err := h.config(want)
	if err != nil {
		return nil, nil, err
	}
	ts, err := h.match(&cfg)
	if err != nil {
		return nil, nil, err
	}
	total := 8 + n + ts[len(ts)-1].e.end
	switch {
	case exact && uint64(avail) > total:
		return nil, nil, stFormat("the header describes a %d-byte file, the file has %d bytes", total, avail)
	case avail >= 0 && uint64(avail) < total:
		return nil, nil, fmt.Errorf("%w: safetensors: the header describes a %d-byte file, the file has %d bytes: %w", ErrFormat, total, avail, io.ErrUnexpectedEOF)
	}
	data, err := readTensors(r, ts)
	if err != nil {
		return nil, nil, err
	}
	p := newParams(&cfg)
	at := 0
	for _, s := range ts {
		k := s.t.Size()
		copy(p.Data[s.t.Off:s.t.Off+k], data[at:at+k])
		at += k
	}
	info := &SafetensorsInfo{HeaderBytes: int64(n), Tensors: len(ts), Dtypes: map[string]int{}, ConfigInFile: inFile, Metadata: h.meta}
	for _, s := range ts {
		info.Dtypes[s.e.dtype]++
	}
	return &Model{cfg: cfg, p: p}, info, nil
}

// stRead turns a read error in part what of the file into a format error.
func stRead(err error, what string) error {
	if err == io.EOF || err == io.ErrUnexpectedEOF {
		return fmt.Errorf("%w: safetensors: truncated in %s: %w", ErrFormat, what, io.ErrUnexpectedEOF)
	}
	return fmt.Errorf("worldmodel: reading safetensors (%s): %w", what, err)
}

// readBytes reads n bytes; when the stream's size is unknown it grows the
// buffer as the bytes arrive.
func readBytes(r io.Reader, n int, known bool) ([]byte, error) {
	if known {
		b := make([]byte, n)
		_, err := io.ReadFull(r, b)
		return b, err
	}
	var b []byte
	for len(b) < n {
		k := min(n-len(b), 1<<20)
		b = slices.Grow(b, k)
		m, err := io.ReadFull(r, b[len(b):len(b)+k])
		b = b[:len(b)+m]
		if err != nil {
			return b, err
		}
	}
	return b, nil
}

// config returns the configuration of the file (see ReadSafetensors) and
// whether it came from the file.
func (h *stHeader) config(want *Config) (Config, bool, error) {
	if v, ok := h.meta[SafetensorsVersionKey]; ok && v != safetensorsVersion {
		return Config{}, false, fmt.Errorf("%w: safetensors %s %q (this build reads %q)", ErrVersion, SafetensorsVersionKey, v, safetensorsVersion)
	}
	js, ok := h.meta[SafetensorsConfigKey]
	if !ok {
		if want == nil {
			return Config{}, false, fmt.Errorf("%w: the safetensors file has no %q metadata: give its configuration (a preset)", ErrConfig, SafetensorsConfigKey)
		}
		if err := want.Validate(); err != nil {
			return Config{}, false, err
		}
		return *want, false, nil
	}
	var cfg Config
	dec := json.NewDecoder(strings.NewReader(js))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&cfg); err != nil {
		return Config{}, false, stFormat("metadata %s: %v", SafetensorsConfigKey, err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return Config{}, false, stFormat("metadata %s: data after the JSON object", SafetensorsConfigKey)
	}
	if err := cfg.Validate(); err != nil {
		return Config{}, false, fmt.Errorf("%w: safetensors metadata %s: %w", ErrFormat, SafetensorsConfigKey, err)
	}
	if want != nil {
		if d := cfg.ArchDiff(want); len(d) > 0 {
			return Config{}, false, fmt.Errorf("%w: the file's %s differs from the expected configuration%s: %s",
				ErrConfig, SafetensorsConfigKey, presetNote(want), strings.Join(d, "; "))
		}
	}
	return cfg, true, nil
}

// presetNote is " (preset NAME)" for a preset's configuration.
func presetNote(c *Config) string {
	if c.Preset == "" {
		return ""
	}
	return fmt.Sprintf(" (preset %s)", c.Preset)
}

// ArchDiff lists the fields in which c differs from the configuration want,
// as "layers 2, expected 3", leaving out the preset name and the dropout
// rate: neither changes a tensor or a prediction. It is empty when a model
// of one configuration can stand for a model of the other.
func (c *Config) ArchDiff(want *Config) []string {
	a, b := c, want
	var d []string
	if a.Profile != b.Profile {
		d = append(d, fmt.Sprintf("profile %q, expected %q", a.Profile, b.Profile))
	}
	for _, f := range []struct {
		name string
		a, b int
	}{
		{"max_history", a.MaxHistory, b.MaxHistory}, {"slots", a.Slots, b.Slots},
		{"subspaces", a.Subspaces, b.Subspaces}, {"codewords", a.Codewords, b.Codewords},
		{"code_dim", a.CodeDim, b.CodeDim}, {"layers", a.Layers, b.Layers}, {"heads", a.Heads, b.Heads},
		{"mlp", a.MLP, b.MLP}, {"action_types", a.ActionTypes, b.ActionTypes},
		{"coord_bins", a.CoordBins, b.CoordBins}, {"action_dim", a.ActionDim, b.ActionDim},
		{"byte_dim", a.ByteDim, b.ByteDim}, {"payload_hidden", a.PayloadHidden, b.PayloadHidden},
		{"max_payload", a.MaxPayload, b.MaxPayload}, {"tasks", a.Tasks, b.Tasks},
	} {
		if f.a != f.b {
			d = append(d, fmt.Sprintf("%s %d, expected %d", f.name, f.a, f.b))
		}
	}
	return d
}

// match pairs every tensor of cfg's layout with the header entry of its
// name, checks dtypes, shapes and byte lengths, and returns the pairs in
// the order of their data, which must tile the buffer from byte 0 without
// holes or overlaps.
func (h *stHeader) match(cfg *Config) ([]stTensor, error) {
	layout := cfg.layout()
	byName := make(map[string]int, len(h.entries))
	for i := range h.entries {
		byName[h.entries[i].name] = i
	}
	known := make(map[string]bool, len(layout))
	var ts []stTensor
	var missing []string
	for i := range layout {
		name := SafetensorsName(layout[i].Name)
		known[name] = true
		if j, ok := byName[name]; ok {
			ts = append(ts, stTensor{&layout[i], &h.entries[j]})
		} else {
			missing = append(missing, name)
		}
	}
	var extra []string
	for _, e := range h.entries {
		if !known[e.name] {
			extra = append(extra, e.name)
		}
	}
	if len(extra) > 0 {
		names, verb := listNames(extra)
		return nil, stFormat("%s %s not in the layout of the configuration%s", names, verb, presetNote(cfg))
	}
	if len(missing) > 0 {
		names, verb := listNames(missing)
		return nil, stFormat("%s of the configuration%s %s missing", names, presetNote(cfg), verb)
	}
	for _, s := range ts {
		e, t := s.e, s.t
		size, ok := stDtypes[e.dtype]
		if !ok {
			return nil, stFormat("tensor %q has dtype %q (this build reads F32, F16, BF16 and F64)", e.name, e.dtype)
		}
		if !sameShape(e.shape, t.Shape) {
			return nil, stFormat("tensor %q has shape %v, the configuration%s has %v", e.name, e.shape, presetNote(cfg), t.Shape)
		}
		if want := uint64(size * t.Size()); e.end-e.begin != want {
			return nil, stFormat("tensor %q: data_offsets [%d, %d] hold %d bytes, its %s values of shape %v take %d",
				e.name, e.begin, e.end, e.end-e.begin, e.dtype, t.Shape, want)
		}
	}
	slices.SortFunc(ts, func(a, b stTensor) int {
		switch {
		case a.e.begin < b.e.begin:
			return -1
		case a.e.begin > b.e.begin:
			return 1
		}
		return strings.Compare(a.e.name, b.e.name)
	})
	var pos uint64
	var prev string
	for _, s := range ts {
		switch {
		case s.e.begin < pos:
			return nil, stFormat("tensor %q at bytes [%d, %d) overlaps tensor %q, which ends at %d", s.e.name, s.e.begin, s.e.end, prev, pos)
		case s.e.begin > pos:
			return nil, stFormat("bytes [%d, %d) of the buffer, before tensor %q, belong to no tensor", pos, s.e.begin, s.e.name)
		}
		pos, prev = s.e.end, s.e.name
	}
	return ts, nil
}

// listNames is `tensor "a"`, "is" or `3 tensors ("a", "b", "c")`, "are"
// (the first three named).
func listNames(names []string) (string, string) {
	if len(names) == 1 {
		return fmt.Sprintf("tensor %q", names[0]), "is"
	}
	q := make([]string, 0, 3)
	for _, n := range names[:min(len(names), 3)] {
		q = append(q, fmt.Sprintf("%q", n))
	}
	if len(names) > 3 {
		q = append(q, "...")
	}
	return fmt.Sprintf("%d tensors (%s)", len(names), strings.Join(q, ", ")), "are"
}

func sameShape(a []uint64, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != uint64(b[i]) {
			return false
		}
	}
	return true
}

// readTensors reads the buffer, the tensors in the order of ts (their data
// order), converts every value to float32 and returns them in that order.
// The values are kept as they arrive, so memory follows the bytes read.
func readTensors(r io.Reader, ts []stTensor) ([]float32, error) {
	total := 0
	for _, s := range ts {
		total += s.t.Size()
	}
	data := make([]float32, 0, min(total, 1<<16))
	buf := make([]byte, 1<<16)
	for _, s := range ts {
		size, n := stDtypes[s.e.dtype], s.t.Size()
		for done := 0; done < n; {
			k := min(n-done, len(buf)/size)
			if _, err := io.ReadFull(r, buf[:k*size]); err != nil {
				return nil, stRead(err, fmt.Sprintf("tensor %q", s.e.name))
			}
			for i := 0; i < k; i++ {
				v, wide := stValue(s.e.dtype, buf[i*size:])
				if isNonFinite(v) {
					how := ""
					if !math.IsNaN(wide) && !math.IsInf(wide, 0) {
						how = " (beyond float32)"
					}
					return nil, stFormat("tensor %q: value %d is %g%s", s.e.name, done+i, wide, how)
				}
				data = append(data, v)
			}
			done += k
		}
	}
	return data, nil
}

// stValue decodes one little-endian value of dtype from b: as float32, and
// as the float64 it was (for messages).
func stValue(dtype string, b []byte) (float32, float64) {
	switch dtype {
	case "F16":
		v := f16to32(binary.LittleEndian.Uint16(b))
		return v, float64(v)
	case "BF16":
		v := math.Float32frombits(uint32(binary.LittleEndian.Uint16(b)) << 16)
		return v, float64(v)
	case "F64":
		w := math.Float64frombits(binary.LittleEndian.Uint64(b))
		return float32(w), w
	}
	v := math.Float32frombits(binary.LittleEndian.Uint32(b))
	return v, float64(v)
}

// f16to32 widens an IEEE 754 half-precision value to float32 (exactly:
// every half is a float32).
func f16to32(h uint16) float32 {
	sign := uint32(h>>15) << 31
	exp := uint32(h>>10) & 0x1f
	man := uint32(h) & 0x3ff
	switch {
	case exp == 0x1f: // infinities and NaNs
		return math.Float32frombits(sign | 0x7f800000 | man<<13)
	case exp == 0 && man == 0:
		return math.Float32frombits(sign)
	case exp == 0: // subnormal: man * 2^-24; normalise the mantissa
		e := uint32(127 - 15 + 1)
		for man&0x400 == 0 {
			man <<= 1
			e--
		}
		return math.Float32frombits(sign | e<<23 | (man&0x3ff)<<13)
	}
	return math.Float32frombits(sign | (exp+127-15)<<23 | man<<13)
}
