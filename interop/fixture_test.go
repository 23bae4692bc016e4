package interop

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/memowm/memowm/opq"
	"github.com/memowm/memowm/sim"
	"github.com/memowm/memowm/trajectory"
)

// The fixture: simEpisodes episodes of the sim world (seed simSeed, simSteps
// actions each, the default 32x512 shape), then one hand-made episode with
// id handID, written as states and, quantised, as codes, in all three formats.
const (
	simEpisodes = 3
	simSteps    = 5
	simSeed     = 7
	handSteps   = 5
	// handID is 2^53+1: a reader that passes episode ids through a float64
	// reads 2^53 instead.
	handID int64 = 1<<53 + 1
)

// stateSamples are the flat state indices (slot*Dim + channel) whose values
// every reader reports bit for bit; the hand-made episode holds edge values
// there (see handState). codeSamples are the same for code vectors.
var (
	stateSamples = []int{0, 1, 511, 512, 8191, 8192, 16382, 16383}
	codeSamples  = []int{0, 1, 31, 32, 511, 777, 1022, 1023}
)

// fixture is the files one test run writes and the episodes they hold.
type fixture struct {
	dir    string
	states []*trajectory.Episode // as written to states.*
	codes  []*trajectory.Episode // as written to codes.*
	meta   map[trajectory.Content]trajectory.Meta
}

// path is the file of content c ("states" or "codes") in format ext.
func (f *fixture) path(c trajectory.Content, ext string) string {
	return filepath.Join(f.dir, c.String()+ext)
}

func (f *fixture) episodes(c trajectory.Content) []*trajectory.Episode {
	if c == trajectory.States {
		return f.states
	}
	return f.codes
}

var (
	fixtureOnce sync.Once
	fixtureVal  *fixture
	fixtureErr  error
)

// TestMain removes the fixture's directory after the tests.
func TestMain(m *testing.M) {
	code := m.Run()
	if fixtureVal != nil {
		os.RemoveAll(fixtureVal.dir)
	}
	os.Exit(code)
}

// getFixture writes the fixture files once per test binary.
func getFixture(t *testing.T) *fixture {
	t.Helper()
	fixtureOnce.Do(func() { fixtureVal, fixtureErr = writeFixture() })
	if fixtureErr != nil {
		t.Fatalf("writing the fixture: %v", fixtureErr)
	}
	return fixtureVal
}

func writeFixture() (*fixture, error) {
	dir, err := os.MkdirTemp("", "memowm-interop-")
	if err != nil {
		return nil, err
	}
	f := &fixture{dir: dir, meta: map[trajectory.Content]trajectory.Meta{}}
	shape := trajectory.DefaultShape

	// States: the sim world, generated as `memowm sim` generates it, then the
	// hand-made episode.
	cfg := sim.DefaultConfig()
	cfg.Episodes, cfg.Steps, cfg.Seed = simEpisodes, simSteps, simSeed
	w, err := sim.New(cfg)
	if err != nil {
		return nil, err
	}
	var train [][]float32
	for i := 0; i < simEpisodes; i++ {
		ep, _, _ := w.Episode(i)
		f.states = append(f.states, ep)
		train = append(train, ep.States...)
	}
	hand := handEpisode(shape)
	f.states = append(f.states, hand)

	// Codes: the sim episodes encoded by an OPQ quantizer fitted on them, as
	// `memowm quantize` encodes them (same actions and facts), then the
	// hand-made episode with codes that cover the whole byte range.
	qc := opq.DefaultConfig()
	qc.Codewords, qc.Shared, qc.Rotation, qc.Iterations = 16, true, opq.NoRotation, 5
	q, err := opq.Fit(train, qc)
	if err != nil {
		return nil, err
	}
	enc := q.NewEncoder()
	for _, ep := range f.states[:simEpisodes] {
		var src []float32
		for _, s := range ep.States {
			src = append(src, s...)
		}
		codes := make([]uint8, len(ep.States)*shape.Codes)
		if err := enc.EncodeBatch(codes, src); err != nil {
			return nil, err
		}
		out := &trajectory.Episode{ID: ep.ID, Actions: ep.Actions, Facts: ep.Facts}
		for i := range ep.States {
			out.Codes = append(out.Codes, codes[i*shape.Codes:(i+1)*shape.Codes])
		}
		f.codes = append(f.codes, out)
	}
	hc := &trajectory.Episode{ID: hand.ID, Actions: hand.Actions, Facts: hand.Facts}
	for t := range hand.States {
		c := make([]uint8, shape.Codes)
		for j := range c {
			c[j] = uint8(j*37 + t*11)
		}
		hc.Codes = append(hc.Codes, c)
	}
	hc.Codes[0][codeSamples[0]], hc.Codes[0][codeSamples[1]] = 255, 128
	f.codes = append(f.codes, hc)

	for _, c := range []trajectory.Content{trajectory.States, trajectory.Codes} {
		m := trajectory.Meta{Shape: shape, Content: c}
		f.meta[c] = m
		for _, ext := range []string{".arrow", ".parquet", ".npy"} {
			if err := writeFile(f.path(c, ext), m, f.episodes(c)); err != nil {
				return nil, err
			}
		}
	}
	return f, nil
}

func writeFile(path string, m trajectory.Meta, eps []*trajectory.Episode) error {
	w, err := trajectory.Create(path, m)
	if err != nil {
		return err
	}
	for _, ep := range eps {
		if err := w.Write(ep); err != nil {
			return err
		}
	}
	return w.Close()
}

// handEpisode has handSteps actions that use every optional action field
// both ways, payloads that are UTF-8, not UTF-8, and empty, facts that are
// present and null, and states with edge values at stateSamples.
func handEpisode(shape trajectory.Shape) *trajectory.Episode {
	ep := &trajectory.Episode{ID: handID}
	special := []float32{
		float32(math.Copysign(0, -1)),    // negative zero
		math.Float32frombits(1),          // the smallest subnormal
		math.MaxFloat32,                  // the largest float32
		-1.0 / 3,                         // not a short decimal
		math.SmallestNonzeroFloat32 * 64, // another subnormal
		1e-38,                            // near the smallest normal
		-123456.789,                      // large, negative
		0.1,                              // not exact in binary
	}
	for t := 0; t <= handSteps; t++ {
		s := make([]float32, shape.StateLen())
		for i := range s {
			s[i] = float32((i*7+t*13)%101)/8 - 6
		}
		for k, idx := range stateSamples {
			s[idx] = special[(k+t)%len(special)]
		}
		ep.States = append(ep.States, s)
	}
	ep.Actions = []trajectory.Action{
		{Type: trajectory.Type, HasPos: true, X: 0.125, Y: 0.875, Payload: []byte("héllo wörld ✓")},
		{Type: trajectory.Drag, HasPos: true, X: 0, Y: 1, HasDelta: true, DX: -1.0 / 3, DY: 0.0625, Payload: []byte{}},
		{Type: trajectory.Key, Payload: []byte{0x00, 0xff, 0x80, 'A'}},
		{Type: trajectory.Noop}, // nil payload: written as an empty value, not null
		{Type: trajectory.Scroll, HasDelta: true, DX: 0, DY: -120.5, Payload: []byte("down")},
	}
	ep.Facts = [][]byte{
		[]byte(`{"page":"hand","note":"first"}`),
		nil,
		[]byte(`{"page":"händ ✓","n":3}`),
		nil,
		[]byte(`{}`),
		[]byte(`{"page":"last"}`),
	}
	return ep
}

// row is one observation as the readers report it. Floats are their IEEE 754
// bits, so that -0, subnormals and the last bit are compared exactly; payloads
// are hex; obs_sha256 is the SHA-256 of the observation's little-endian bytes
// (float32 or uint8) and obs_sample its values at the sample indices (bits for
// states).
type row struct {
	Episode    string   `json:"episode"`
	Step       int      `json:"step"`
	ActionType *int     `json:"action_type"`
	PosX       *uint32  `json:"pos_x"`
	PosY       *uint32  `json:"pos_y"`
	DX         *uint32  `json:"dx"`
	DY         *uint32  `json:"dy"`
	Payload    *string  `json:"payload"`
	Facts      *string  `json:"facts"`
	Page       *string  `json:"page"` // facts' "page" field, via DuckDB's JSON functions
	ObsLen     int      `json:"obs_len"`
	ObsSHA256  string   `json:"obs_sha256"`
	ObsSample  []uint32 `json:"obs_sample"`
}

// expectedRows is every observation of eps as Go wrote it, in file order.
func expectedRows(c trajectory.Content, eps []*trajectory.Episode) []row {
	var rows []row
	for _, ep := range eps {
		for t := 0; t < ep.Len(); t++ {
			r := row{Episode: strconv.FormatInt(ep.ID, 10), Step: t}
			if c == trajectory.States {
				b := make([]byte, 0, 4*len(ep.States[t]))
				for _, v := range ep.States[t] {
					b = binary.LittleEndian.AppendUint32(b, math.Float32bits(v))
				}
				r.ObsLen, r.ObsSHA256 = len(ep.States[t]), sha(b)
				for _, i := range stateSamples {
					r.ObsSample = append(r.ObsSample, math.Float32bits(ep.States[t][i]))
				}
			} else {
				r.ObsLen, r.ObsSHA256 = len(ep.Codes[t]), sha(ep.Codes[t])
				for _, i := range codeSamples {
					r.ObsSample = append(r.ObsSample, uint32(ep.Codes[t][i]))
				}
			}
			if ep.Facts != nil && ep.Facts[t] != nil {
				s := string(ep.Facts[t])
				r.Facts = &s
				var page struct {
					Page *string `json:"page"`
				}
				if err := json.Unmarshal(ep.Facts[t], &page); err != nil {
					panic(fmt.Sprintf("fixture facts %q: %v", s, err))
				}
				r.Page = page.Page
			}
			if t > 0 {
				a := ep.Actions[t-1]
				typ := int(a.Type)
				r.ActionType = &typ
				if a.HasPos {
					r.PosX, r.PosY = bits(a.X), bits(a.Y)
				}
				if a.HasDelta {
					r.DX, r.DY = bits(a.DX), bits(a.DY)
				}
				p := hex.EncodeToString(a.Payload)
				r.Payload = &p
			}
			rows = append(rows, r)
		}
	}
	return rows
}

func sha(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

func bits(f float32) *uint32 {
	b := math.Float32bits(f)
	return &b
}

// episodeSummary is one episode's rows as a SQL GROUP BY sees them.
type episodeSummary struct {
	Episode   string `json:"episode"`
	Rows      int    `json:"rows"`
	FirstStep int    `json:"first_step"`
	LastStep  int    `json:"last_step"`
}

func expectedEpisodes(eps []*trajectory.Episode) []episodeSummary {
	var out []episodeSummary
	for _, ep := range eps {
		out = append(out, episodeSummary{Episode: strconv.FormatInt(ep.ID, 10), Rows: ep.Len(), FirstStep: 0, LastStep: ep.Len() - 1})
	}
	return out
}

// actionCount is how many rows carry one action type.
type actionCount struct {
	ActionType int `json:"action_type"`
	Rows       int `json:"rows"`
}

func expectedActionCounts(eps []*trajectory.Episode) []actionCount {
	var n [trajectory.NumActionTypes]int
	for _, ep := range eps {
		for _, a := range ep.Actions {
			n[a.Type]++
		}
	}
	var out []actionCount
	for typ, c := range n {
		if c > 0 {
			out = append(out, actionCount{ActionType: typ, Rows: c})
		}
	}
	return out
}

// expectedMetadata is the memowm schema metadata of a file with meta m.
// expectedMetadata is the schema metadata memowm writes for m: Schema's
// keys and the checksum promise. A Parquet file also carries the episode
// checksums in its key-value metadata: got's value is taken when it holds 8
// hex digits per episode (the Go reader verifies the sums themselves).
func expectedMetadata(m trajectory.Meta, got map[string]string, episodes int, parquet bool) map[string]string {
	md := trajectory.Schema(m).Metadata()
	out := map[string]string{"memowm.checksum": "crc32c-episode"}
	for i, k := range md.Keys() {
		out[k] = md.Values()[i]
	}
	if parquet {
		out["memowm.episode_crc32c"] = "8 hex digits per episode"
		if v := got["memowm.episode_crc32c"]; len(v) == 8*episodes && strings.Trim(v, "0123456789abcdef") == "" {
			out["memowm.episode_crc32c"] = v
		}
	}
	return out
}
