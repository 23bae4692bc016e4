package bench

import (
	"bytes"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/memowm/memowm/internal/fixture"
	"github.com/memowm/memowm/trajectory"
)

// row is rep's row named name.
func row(t *testing.T, rep *Report, name string) Row {
	t.Helper()
	for _, m := range rep.Methods {
		if m.Name == name {
			return m
		}
	}
	t.Fatalf("no row %s", name)
	return Row{}
}

// checkGeneral checks best-general against the general-purpose rows and
// every row's ratio to it.
func checkGeneral(t *testing.T, rep *Report) {
	t.Helper()
	best := row(t, rep, BestGeneral)
	least := ""
	var general []string
	for _, m := range rep.Methods {
		if IsGeneral(m.Name) {
			general = append(general, m.Name)
		}
	}
	if len(general) < 3 {
		t.Fatalf("general-purpose rows %v", general)
	}
	for _, name := range general {
		m := row(t, rep, name)
		if m.EncodeObsPerS <= 0 || m.DecodeObsPerS <= 0 || m.Note == "" {
			t.Fatalf("%s: %+v", name, m)
		}
		if least == "" || m.BitsPerObs < row(t, rep, least).BitsPerObs {
			least = name
		}
	}
	min := row(t, rep, least)
	if best.BitsPerObs != min.BitsPerObs || best.IdealBitsPerObs != min.IdealBitsPerObs ||
		best.EncodeObsPerS != min.EncodeObsPerS || !strings.HasPrefix(best.Note, least+",") {
		t.Fatalf("best-general %+v, smallest %+v", best, min)
	}
	if best.RatioBestGeneral != 1 {
		t.Fatalf("best-general's ratio %v", best.RatioBestGeneral)
	}
	for _, m := range rep.Methods {
		if m.RatioBestGeneral != m.BitsPerObs/best.BitsPerObs || m.RatioBestGeneral <= 0 {
			t.Fatalf("%s: ratio %v, bits %v / %v", m.Name, m.RatioBestGeneral, m.BitsPerObs, best.BitsPerObs)
		}
		if IsGeneral(m.Name) {
			if m.RatioBestGeneral < 1 {
				t.Fatalf("%s below best-general: %v", m.Name, m.RatioBestGeneral)
			}
		}
	}
}

// TestGeneralRoundTrip compresses each fixture episode, and two longer
// made-up ones (several zstd blocks and LZMA2 chunks, repeats far apart),
// with each general-purpose coder and decodes it back.
func TestGeneralRoundTrip(t *testing.T) {
	s, err := fixture.Get()
	if err != nil {
		t.Fatal(err)
	}
	raw, obs := packEpisodes(s.Episodes, 4)
	if len(raw) != len(s.Episodes) || obs == 0 || len(raw[0]) != len(s.Episodes[0].Codes)*1024*4/8 {
		t.Fatalf("%d episodes, %d observations, %d bytes", len(raw), obs, len(raw[0]))
	}
	rng := rand.New(rand.NewPCG(1, 2))
	block := make([]byte, 300<<10)
	for i := range block {
		block[i] = byte(rng.IntN(16))
	}
	long := append(append(append([]byte(nil), block...), bytes.Repeat([]byte{7}, 1<<20)...), block...)
	raw = append(raw, long, nil)
	longest := 0
	for _, b := range raw {
		longest = max(longest, len(b))
	}
	for _, mk := range []func() (compressor, error){
		func() (compressor, error) { return newZstd("zstd", 0) },
		func() (compressor, error) { return newZstd("zstd-long", longest) },
		func() (compressor, error) { return newXZ(longest) },
	} {
		c, err := mk()
		if err != nil {
			t.Fatal(err)
		}
		for i, b := range raw {
			z, err := c.enc(b)
			if err != nil {
				t.Fatalf("%s episode %d: %v", c.name, i, err)
			}
			d, err := c.dec(z)
			if err != nil || !bytes.Equal(d, b) {
				t.Fatalf("%s episode %d: %d bytes back of %d: %v", c.name, i, len(d), len(b), err)
			}
			if i == len(raw)-2 && len(z) > len(block)*3/4 {
				// The second copy of the block, 1.3 MiB back, is a match.
				t.Fatalf("%s: %d bytes for a block of %d repeated", c.name, len(z), len(block))
			}
		}
		c.close()
		t.Logf("%s: %s", c.name, c.note)
	}
}

// TestGeneralErrors: a row that does not decode back fails with bench:.
func TestGeneralErrors(t *testing.T) {
	c := compressor{name: "broken",
		enc: func(b []byte) ([]byte, error) { return b, nil },
		dec: func(b []byte) ([]byte, error) { return append(b, 0), nil },
	}
	ep := &trajectory.Episode{ID: 3}
	if _, err := generalRow(c, []*trajectory.Episode{ep}, [][]byte{{1}}, 1, 0); err == nil || !strings.HasPrefix(err.Error(), "bench: broken round trip of episode 3") {
		t.Fatalf("%v", err)
	}
	if err := setRatios([]Row{{Name: "zstd", BitsPerObs: 1}}, 1); err == nil || !strings.HasPrefix(err.Error(), "bench:") {
		t.Fatalf("%v", err)
	}
}
