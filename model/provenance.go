package model

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/memowm/memowm/internal/atomicfile"
)

// ProvenancePath is the sidecar file beside the bundle at path that records
// what a training run leaves besides the model: its wall-clock time and the
// host that ran it. They are not part of the bundle's bytes, so the same
// run (inputs, flags, seed) gives the same bundle, byte for byte, whenever
// and wherever it runs.
func ProvenancePath(path string) string { return path + ".provenance.json" }

// Provenance is the sidecar's content (JSON, field names part of the
// format). Bundle names the bundle it describes by its SHA-256 (hex): a
// sidecar left beside a bundle it does not describe (one written over it
// later, say) is ignored.
type Provenance struct {
	Bundle       string  `json:"bundle_sha256"`
	Seconds      float64 `json:"seconds,omitempty"`
	PriorSeconds float64 `json:"prior_seconds,omitempty"`
	Host         string  `json:"host,omitempty"`
}

// maxProvenance bounds the sidecar that Load reads.
const maxProvenance = 64 << 10

// provenance returns what b's training record holds that belongs in the
// sidecar, and whether there is anything.
func (b *Bundle) provenance() (Provenance, bool) {
	t := b.Training
	if t == nil || b.legacySeconds || t.Seconds == 0 && t.PriorSeconds == 0 && t.Host == "" {
		return Provenance{}, false
	}
	return Provenance{Bundle: b.HashString(), Seconds: t.Seconds, PriorSeconds: t.PriorSeconds, Host: t.Host}, true
}

// saveProvenance writes the sidecar of the bundle b just wrote at path, when
// its training record has a time or a host.
func (b *Bundle) saveProvenance(path string) error {
	p, ok := b.provenance()
	if !ok {
		return nil
	}
	data, err := json.MarshalIndent(p, "", "  ")
	if err != nil {
		return err
	}
	data = append(data, '\n')
	return atomicfile.Write(ProvenancePath(path), func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

// loadProvenance fills b's training time and host from the sidecar of the
// bundle at path, when there is one that names b's hash and holds a
// well-formed record; otherwise they stay unrecorded (a sidecar is a record,
// never a reason to refuse a bundle). Bundles whose header holds their time
// (written before the sidecar) keep it.
func (b *Bundle) loadProvenance(path string) {
	t := b.Training
	if t == nil || b.legacySeconds || t.Imported != "" {
		return
	}
	p, err := readProvenance(ProvenancePath(path))
	if err != nil || p.Bundle != b.HashString() {
		return
	}
	c := *t
	c.Seconds, c.PriorSeconds, c.Host = p.Seconds, p.PriorSeconds, p.Host
	if c.check() != nil {
		return
	}
	*t = c
}

// readProvenance reads a sidecar.
func readProvenance(path string) (Provenance, error) {
	var p Provenance
	f, err := os.Open(path)
	if err != nil {
		return p, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxProvenance+1))
	if err != nil {
		return p, err
	}
	if len(data) > maxProvenance {
		return p, errors.New("model: provenance file too large")
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&p); err != nil {
		return p, fmt.Errorf("model: %s: %w", path, err)
	}
	return p, nil
}
