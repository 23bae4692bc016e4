package reader

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha3"
	"encoding/binary"
	"encoding/json"
	"errors"
	"io"
	"math"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/memowm/memowm/trajectory"
)

// The reference server, reader/reference/server.py, run over loopback: the
// whole chain (encoding, HTTP, both protocol versions, the server's parsing
// and its reader, the answer's bits) against an independent computation of
// what its documented reader gives.

const referenceScript = "reference/server.py"

// safeBuffer collects a child's stderr while the test may read it.
type safeBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *safeBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *safeBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// startReference starts the reference server on a free loopback port with
// args and returns its URL; the server is killed when the test ends. A
// missing python3 skips the test, or fails it under MEMOWM_INTEROP=1 (CI).
func startReference(t *testing.T, args ...string) string {
	t.Helper()
	strict := os.Getenv("MEMOWM_INTEROP") == "1" // read in the test: part of go test's cache key
	py, err := exec.LookPath("python3")
	if err != nil {
		if strict {
			t.Fatalf("python3 is missing; MEMOWM_INTEROP=1 makes that a failure")
		}
		t.Skipf("skipped: python3 is missing (set MEMOWM_INTEROP=1 to make this a failure)")
	}
	// Reading the script makes it part of go test's cache key.
	if _, err := os.ReadFile(referenceScript); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	// -I: isolated, no user site-packages or PYTHON* variables: the standard
	// library only.
	cmd := exec.CommandContext(ctx, py, append([]string{"-I", filepath.FromSlash(referenceScript), "--port", "0"}, args...)...)
	stderr := &safeBuffer{}
	cmd.Stderr = stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		cancel()
		t.Fatalf("starting %s: %v", referenceScript, err)
	}
	t.Cleanup(func() {
		cancel() // kills the server
		cmd.Wait()
	})
	line := make(chan string, 1)
	go func() {
		s, _ := bufio.NewReader(out).ReadString('\n')
		line <- s
	}()
	var first string
	select {
	case first = <-line:
	case <-time.After(20 * time.Second):
		t.Fatalf("%s printed nothing in 20 s; stderr: %s", referenceScript, stderr)
	}
	addr, ok := strings.CutPrefix(strings.TrimSpace(first), "listening on 127.0.0.1:")
	if !ok || addr == "" {
		t.Fatalf("%s's first line is %q, want \"listening on 127.0.0.1:PORT\"; stderr: %s", referenceScript, first, stderr)
	}
	return "http://127.0.0.1:" + addr + "/"
}

// referenceBits is what the reference server's reader gives, computed here
// from its documentation: log-score sqrt(dim) * sum_s mean_s * v_c[s], v_c
// from SHAKE-256 of the choice text, then the answer's bits under a softmax.
func referenceBits(x []float32, slots, dim int, q *trajectory.Question) float64 {
	means := make([]float64, slots)
	for s := range means {
		sum := 0.0
		for _, v := range x[s*dim : (s+1)*dim] {
			sum += float64(v)
		}
		means[s] = sum / float64(dim)
	}
	lp := make([]float64, len(q.Choices))
	ans := -1
	for i, c := range q.Choices {
		h := sha3.NewSHAKE256()
		h.Write([]byte("memowm-reference-reader\x00" + c))
		raw := make([]byte, 4*slots)
		h.Read(raw)
		dot := 0.0
		for s := range means {
			dot += means[s] * (float64(binary.LittleEndian.Uint32(raw[4*s:]))/(1<<31) - 1)
		}
		lp[i] = math.Sqrt(float64(dim)) * dot
		if c == q.Answer && ans < 0 {
			ans = i
		}
	}
	mx := math.Inf(-1)
	for _, v := range lp {
		mx = max(mx, v)
	}
	s := 0.0
	for _, v := range lp {
		s += math.Exp(v - mx)
	}
	return (mx + math.Log(s) - lp[ans]) / math.Ln2
}

// referenceData is toyData with some questions given other choices: UTF-8
// text, many choices, and a repeated one.
func referenceData(n int, seed uint64) ([][]float32, []*trajectory.Question) {
	states, qs := toyData(n, seed)
	rng := rand.New(rand.NewPCG(seed, 11))
	sets := [][]string{{"café", "naïve", "日本語", "ok"}, {"a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "l"}, {"x", "y", "x"}}
	for i := range qs {
		if rng.IntN(3) == 0 {
			set := sets[rng.IntN(len(sets))]
			q := *qs[i]
			q.Kind, q.Choices, q.Answer = "other", set, set[rng.IntN(len(set))]
			qs[i] = &q
		}
	}
	return states, qs
}

func TestReferenceReader(t *testing.T) {
	start := time.Now()
	a := toyArch()
	url := startReference(t, "--shape", "4x16")
	t.Logf("server up after %v", time.Since(start).Round(time.Millisecond))
	states, qs := referenceData(60, 42)
	shape := WithShape(a.Slots, a.Dim)
	var want []float64
	for _, c := range []struct {
		name string
		opts []HTTPOption
	}{
		{"v1", []HTTPOption{shape, WithBatch(1)}},
		{"v1 again", []HTTPOption{shape, WithBatch(1), WithParallel(4)}},
		{"v2 batch 7 x 3", []HTTPOption{shape, WithBatch(7), WithParallel(3)}},
		{"v2 json state", []HTTPOption{shape, WithBatch(16), WithJSONState()}},
		{"default", []HTTPOption{shape}},
	} {
		r, err := NewHTTP(url, c.opts...)
		if err != nil {
			t.Fatal(err)
		}
		t0 := time.Now()
		bits, err := r.Bits(nil, states, qs)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		t.Logf("%s: %d questions in %v, protocol %d", c.name, len(qs), time.Since(t0).Round(time.Millisecond), r.Protocol())
		if r.Protocol() != min(r.Batch(), 2) {
			t.Errorf("%s: protocol %d with batch %d", c.name, r.Protocol(), r.Batch())
		}
		if want == nil {
			want = bits
			for i, q := range qs {
				ref := referenceBits(states[i], a.Slots, a.Dim, q)
				if math.IsNaN(bits[i]) || math.IsInf(bits[i], 0) || bits[i] < 0 || math.Abs(bits[i]-ref) > 1e-9*max(1, ref) {
					t.Fatalf("question %d (%q of %q): %v bits, want %v", i, q.Answer, q.Choices, bits[i], ref)
				}
			}
			continue
		}
		for i := range bits {
			if bits[i] != want[i] {
				t.Fatalf("%s: question %d: %v bits, v1 gave %v", c.name, i, bits[i], want[i])
			}
		}
	}

	// The reader reads the state: scaling one changes the bits.
	r, _ := NewHTTP(url, shape, WithBatch(8), WithParallel(2))
	x := append([]float32(nil), states[0]...)
	for i := range x {
		x[i] *= 3
	}
	if b := mustBits(r, [][]float32{x}, qs[:1]); b[0] == want[0] {
		t.Errorf("bits %v for the state and three times it", b[0])
	}
	// BitsEdits equals Bits on the edited states.
	var edits []SlotEdit
	var edited [][]float32
	for k := range 11 {
		e := SlotEdit{Slot: k % a.Slots, Values: states[k+1][(k%a.Slots)*a.Dim : (k%a.Slots+1)*a.Dim]}
		y := append([]float32(nil), states[0]...)
		copy(y[e.Slot*a.Dim:], e.Values)
		edits, edited = append(edits, e), append(edited, y)
	}
	eb, err := r.BitsEdits(nil, states[0], qs[0], edits)
	if err != nil {
		t.Fatal(err)
	}
	same := make([]*trajectory.Question, len(edits))
	for k := range same {
		same[k] = qs[0]
	}
	for k, b := range mustBits(r, edited, same) {
		if eb[k] != b {
			t.Fatalf("edit %d: %v, Bits of the edited state %v", k, eb[k], b)
		}
	}

	// A request the server refuses is a clear ErrResponse, not retried.
	for _, batch := range []int{1, 4} {
		bad, _ := NewHTTP(url, WithShape(2, 32), WithBatch(batch), WithBackoff(time.Millisecond))
		st := make([][]float32, 5)
		for i := range st {
			st[i] = make([]float32, 64)
		}
		_, err := bad.Bits(nil, st, qs[:5])
		if !errors.Is(err, ErrResponse) || !strings.Contains(err.Error(), "400 Bad Request") ||
			!strings.Contains(err.Error(), "is 2 x 32; this reader reads 4 x 16") {
			t.Errorf("batch %d, wrong shape: %v", batch, err)
		}
		t.Logf("batch %d: %v", batch, err)
		if batch > 1 && !strings.Contains(err.Error(), "items[0]: ") {
			t.Errorf("batch %d: %v does not name the item", batch, err)
		}
	}
	t.Logf("whole test %v", time.Since(start).Round(time.Millisecond))
}

// The server's answers to malformed requests: 400 and a message that says
// what is wrong.
func TestReferenceReaderMalformed(t *testing.T) {
	url := startReference(t)
	state := `{"slots": 1, "dim": 2, "values": [0.5, -1]}`
	item := `{"choices": ["a", "b"], "answer": "b", "state": ` + state + `}`
	for _, c := range []struct{ body, ctype, want string }{
		{`nope`, "", "body is not JSON"},
		{`[1]`, "", "body is not a JSON object"},
		{`{"choices": ["a"]}`, "", `unsupported \"version\" null`},
		{`{"version": 3}`, "", `unsupported \"version\" 3`},
		{`{"version": 2, "items": 5}`, "", `\"items\" is missing or not a list`},
		{`{"version": 2, "items": [` + item + `, 7]}`, "", "items[1]: is not a JSON object"},
		{`{"version": 2, "items": [` + item + `, {"choices": ["a"], "answer": "z", "state": ` + state + `}]}`, "", `items[1]: \"answer\" \"z\" is not among the 1 choices`},
		{`{"version": 1, "choices": [], "answer": "a", "state": ` + state + `}`, "", `\"choices\" is missing or not a non-empty list`},
		{`{"version": 1, "choices": ["a", 2], "answer": "a", "state": ` + state + `}`, "", `\"choices\"[1] is 2, not a string`},
		{`{"version": 1, "choices": ["a"], "answer": "a"}`, "", `\"state\" is missing`},
		{`{"version": 1, "choices": ["a"], "answer": "a", "state": {"slots": 1, "dim": 2, "values": [1]}}`, "", `has 1 values, want 1 x 2 = 2`},
		{`{"version": 1, "choices": ["a"], "answer": "a", "state": {"slots": 1, "dim": 1, "values": [NaN]}}`, "", "NaN is not a JSON number"},
		{`{"version": 1, "choices": ["a"], "answer": "a", "state": {"slots": 1, "dim": 1, "values": [1e999]}}`, "", "want a finite number"},
		{`{"version": 1, "choices": ["a"], "answer": "a", "state": {"slots": 1, "dim": 2, "values": [1, -1e39]}}`, "", `\"values\"[1] is outside the float32 range`},
		{`{"version": 1, "choices": ["a"], "answer": "a", "state": {"slots": 0, "dim": 1, "values": []}}`, "", `\"slots\" is 0`},
		{`{"version": 1, "choices": ["a"], "answer": "a", "state": {"slots": 1, "dim": 2, "encoding": "f16"}}`, "", `unknown \"encoding\" \"f16\"`},
		{`{"version": 1, "choices": ["a"], "answer": "a", "state": {"slots": 1, "dim": 2, "encoding": "f32le-base64", "data": "!!"}}`, "", "is not base64"},
		{`{"version": 1, "choices": ["a"], "answer": "a", "state": {"slots": 1, "dim": 2, "encoding": "f32le-base64", "data": "AAAA"}}`, "", "holds 3 bytes, want 4 x 1 x 2 = 8"},
		{`{"version": 1, "choices": ["a"], "answer": "a", "state": {"slots": 1, "dim": 1, "encoding": "f32le-base64", "data": "AADAfw=="}}`, "", "is nan"},
		{`{"version": 1, "step": "7", "choices": ["a"], "answer": "a", "state": ` + state + `}`, "", `\"step\" is \"7\", not an integer`},
		{`{"version": 1}`, "text/plain", "want application/json"},
	} {
		ctype := c.ctype
		if ctype == "" {
			ctype = "application/json"
		}
		resp, err := http.Post(url, ctype, strings.NewReader(c.body))
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		var e struct{ Error string }
		json.Unmarshal(body, &e)
		want := strings.ReplaceAll(c.want, `\"`, `"`)
		if resp.StatusCode/100 != 4 || !strings.Contains(e.Error, want) {
			t.Errorf("%s: %s %s, want 4xx with an error mentioning %s", c.body, resp.Status, body, want)
		}
	}
	// A well-formed request of each version, and the health check.
	for _, body := range []string{`{"version": 1, "choices": ["a", "b"], "answer": "b", "state": ` + state + `}`,
		`{"version": 2, "items": [` + item + `, ` + item + `]}`, `{"version": 2, "items": []}`} {
		resp, err := http.Post(url, "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		out, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || !bytes.Contains(out, []byte(`"logprobs"`)) && !bytes.Contains(out, []byte(`{"results": []}`)) {
			t.Errorf("%s: %s %s", body, resp.Status, out)
		}
	}
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	out, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !bytes.Contains(out, []byte(`"protocols": [1, 2]`)) {
		t.Errorf("GET: %s %s", resp.Status, out)
	}
}
