package trajectory

import (
	"errors"
	"io"
	"path/filepath"
	"strings"
	"testing"
)

// sign is a stand-in quantizer: one code per value, 1 when it is positive.
func sign(dst []uint8, s []float32) error {
	for i := range dst {
		dst[i] = 0
		if s[i] > 0 {
			dst[i] = 1
		}
	}
	return nil
}

// TestWithQuantize reads a states file twice, with and without quantizing on
// read: the quantized episodes carry the codes of the states, no states, and
// the same actions and facts; their checksums are verified on the way, so a
// damaged state is still an error; an error from the quantizer names the
// episode and step.
func TestWithQuantize(t *testing.T) {
	m := Meta{Shape: smallShape, Content: States}
	n := smallShape.StateLen()
	eps := testEpisodes(m, 24, 70)
	// One episode longer than a record batch (rowsPerBatch rows).
	long := &Episode{ID: 7}
	for _, ep := range eps[3:] {
		long.States = append(long.States, ep.States...)
	}
	for len(long.Actions) < long.Len()-1 {
		long.Actions = append(long.Actions, eps[0].Actions[0])
	}
	if long.Len() <= rowsPerBatch {
		t.Fatalf("the long episode has %d observations", long.Len())
	}
	eps = append([]*Episode{long}, eps[:3]...)
	for _, ext := range []string{".arrow", ".parquet"} {
		p := filepath.Join(t.TempDir(), "x"+ext)
		writeFile(t, p, m, eps)
		plain := readEpisodes(t, p)
		r, err := Open(p, WithQuantize(n, sign))
		if err != nil {
			t.Fatal(err)
		}
		for k := 0; ; k++ {
			ep, err := r.Next()
			if errors.Is(err, io.EOF) {
				if k != len(plain) {
					t.Fatalf("%s: %d episodes, want %d", ext, k, len(plain))
				}
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			want := plain[k]
			if ep.States != nil || len(ep.Codes) != want.Len() || len(ep.Actions) != len(want.Actions) || len(ep.Facts) != len(want.Facts) {
				t.Fatalf("%s: episode %d: %d states, %d codes, want %d codes", ext, ep.ID, len(ep.States), len(ep.Codes), want.Len())
			}
			z := make([]uint8, n)
			for s := range want.States {
				sign(z, want.States[s])
				if string(z) != string(ep.Codes[s]) {
					t.Fatalf("%s: episode %d step %d: codes differ from the states'", ext, ep.ID, s)
				}
			}
		}
		r.Close()
		// The quantizer's error names where it happened.
		r, _ = Open(p, WithQuantize(n, func([]uint8, []float32) error { return errors.New("no codebook") }))
		if _, err := r.Next(); err == nil || !strings.Contains(err.Error(), "step 0: no codebook") || !strings.Contains(err.Error(), p) {
			t.Fatalf("%s: quantizer error: %v", ext, err)
		}
		r.Close()
	}
	if _, err := Open("x.arrow", WithQuantize(0, sign)); err == nil {
		t.Fatal("WithQuantize(0) accepted")
	}
}

func readEpisodes(t *testing.T, p string, opts ...Option) []*Episode {
	t.Helper()
	r, err := Open(p, opts...)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var out []*Episode
	for {
		ep, err := r.Next()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, ep)
	}
}
