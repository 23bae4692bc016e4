package reader

import (
	"encoding/json"
	"errors"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/memowm/memowm/trajectory"
)

// stateSum is what the test server reads from a state: the sum of its values,
// so the tests see that the state arrived intact.
func stateSum(x []float32) float64 {
	s := 0.0
	for _, v := range x {
		s += float64(v)
	}
	return s
}

// echoServer answers {"bits": |sum of the state| + len(choices)}.
func echoServer(t *testing.T) *httptest.Server {
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req Request
		if r.Method != http.MethodPost || r.Header.Get("Content-Type") != "application/json" {
			http.Error(w, "bad method", http.StatusBadRequest)
			return
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		x, err := req.State.StateValues()
		if err != nil || req.Version != ProtocolVersion || req.Answer == "" {
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		json.NewEncoder(w).Encode(map[string]float64{"bits": math.Abs(stateSum(x)) + float64(len(req.Choices))})
	}))
}

func TestHTTPReaderBits(t *testing.T) {
	srv := echoServer(t)
	defer srv.Close()
	a := toyArch()
	states, qs := toyData(12, 31)
	for _, opts := range [][]HTTPOption{{WithShape(a.Slots, a.Dim)}, {WithShape(a.Slots, a.Dim), WithJSONState(), WithParallel(4)}} {
		r, err := NewHTTP(srv.URL, opts...)
		if err != nil {
			t.Fatal(err)
		}
		bits, err := r.Bits(nil, states, qs)
		if err != nil {
			t.Fatal(err)
		}
		for i := range qs {
			want := math.Abs(stateSum(states[i])) + float64(len(qs[i].Choices))
			if math.Abs(bits[i]-want) > 1e-9*max(1, want) {
				t.Fatalf("question %d: %v bits, want %v", i, bits[i], want)
			}
		}
		edits := []SlotEdit{{Slot: 1, Values: states[1][a.Dim : 2*a.Dim]}, {Slot: 3, Values: states[2][3*a.Dim:]}}
		eb, err := r.BitsEdits(nil, states[0], qs[0], edits)
		if err != nil {
			t.Fatal(err)
		}
		for k, e := range edits {
			x := append([]float32(nil), states[0]...)
			copy(x[e.Slot*a.Dim:], e.Values)
			want := mustBits(r, [][]float32{x}, qs[:1])[0]
			if eb[k] != want {
				t.Fatalf("edit %d: %v, want %v", k, eb[k], want)
			}
		}
	}
}

func TestHTTPReaderLogProbs(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `{"logprobs": [0, 1, 2], "note": "ignored"}`)
	}))
	defer srv.Close()
	r, _ := NewHTTP(srv.URL, WithShape(4, 16))
	states, _ := toyData(1, 1)
	q := &trajectory.Question{Kind: "k", Subject: "s", Answer: "b", Choices: []string{"a", "b", "c"}}
	bits, err := r.Bits(nil, states, []*trajectory.Question{q})
	if err != nil {
		t.Fatal(err)
	}
	want := -math.Log2(math.E / (1 + math.E + math.E*math.E))
	if math.Abs(bits[0]-want) > 1e-12 {
		t.Fatalf("%v bits, want %v", bits[0], want)
	}
}

func TestHTTPReaderRetries(t *testing.T) {
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch calls.Add(1) {
		case 1:
			http.Error(w, "busy", http.StatusServiceUnavailable)
		case 2:
			http.Error(w, "slow down", http.StatusTooManyRequests)
		default:
			io.WriteString(w, `{"bits": 0.5}`)
		}
	}))
	defer srv.Close()
	r, _ := NewHTTP(srv.URL, WithShape(4, 16), WithBackoff(time.Millisecond), WithRetries(2))
	states, qs := toyData(1, 1)
	bits, err := r.Bits(nil, states, qs)
	if err != nil || bits[0] != 0.5 || calls.Load() != 3 {
		t.Fatalf("bits %v, err %v after %d calls; want 0.5 after 3", bits, err, calls.Load())
	}
}

func TestHTTPReaderUnavailable(t *testing.T) {
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		http.Error(w, "down", http.StatusBadGateway)
	}))
	defer srv.Close()
	r, _ := NewHTTP(srv.URL, WithShape(4, 16), WithBackoff(time.Millisecond), WithRetries(3))
	states, qs := toyData(1, 1)
	_, err := r.Bits(nil, states, qs)
	if !errors.Is(err, ErrUnavailable) || calls.Load() != 4 || !strings.Contains(err.Error(), "502") {
		t.Fatalf("err %v after %d calls; want ErrUnavailable naming 502 after 4", err, calls.Load())
	}
	// A closed server: connection errors are retried, then unavailable.
	srv.Close()
	if _, err := r.Bits(nil, states, qs); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("closed server: %v", err)
	}
}

func TestHTTPReaderTimeout(t *testing.T) {
	var calls atomic.Int32
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1) <= 2 {
			select {
			case <-release:
			case <-r.Context().Done():
			}
			return
		}
		io.WriteString(w, `{"bits": 1.25}`)
	}))
	defer srv.Close()
	defer close(release)
	states, qs := toyData(1, 1)
	r, _ := NewHTTP(srv.URL, WithShape(4, 16), WithTimeout(50*time.Millisecond), WithBackoff(time.Millisecond), WithRetries(1))
	start := time.Now()
	_, err := r.Bits(nil, states, qs)
	if !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), "timeout") {
		t.Fatalf("err %v, want ErrUnavailable after timeouts", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Fatalf("two 50 ms attempts took %v", d)
	}
	// The third call answers: a retry after a timeout succeeds.
	r2, _ := NewHTTP(srv.URL, WithShape(4, 16), WithTimeout(50*time.Millisecond), WithBackoff(time.Millisecond), WithRetries(2))
	bits, err := r2.Bits(nil, states, qs)
	if err != nil || bits[0] != 1.25 {
		t.Fatalf("bits %v, err %v", bits, err)
	}
}

func TestHTTPReaderBadResponses(t *testing.T) {
	states, qs := toyData(1, 1)
	q := qs[0]
	cases := map[string]struct {
		status int
		body   string
		want   string
	}{
		"not json":      {200, `bits=1`, "not a JSON"},
		"nan literal":   {200, `{"bits": NaN}`, "not a JSON"},
		"nan string":    {200, `{"bits": "NaN"}`, "not a JSON"},
		"missing field": {200, `{"answer": 1}`, "neither"},
		"both fields":   {200, `{"bits": 1, "logprobs": [0]}`, "both"},
		"negative bits": {200, `{"bits": -0.5}`, ">= 0"},
		"huge bits":     {200, `{"bits": 1e999}`, "not a JSON"},
		"wrong length":  {200, `{"logprobs": [0]}`, "values for"},
		"empty body":    {200, ``, "not a JSON"},
		"bad request":   {400, `no`, "400"},
		"not found":     {404, ``, "404"},
	}
	for name, c := range cases {
		var calls atomic.Int32
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			calls.Add(1)
			w.WriteHeader(c.status)
			io.WriteString(w, c.body)
		}))
		r, _ := NewHTTP(srv.URL, WithShape(4, 16), WithBackoff(time.Millisecond))
		_, err := r.Bits(nil, states[:1], []*trajectory.Question{q})
		srv.Close()
		if !errors.Is(err, ErrResponse) || !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), "reader: ") {
			t.Errorf("%s: %v, want ErrResponse mentioning %q", name, err, c.want)
		}
		if calls.Load() != 1 {
			t.Errorf("%s: %d calls; a bad response is not retried", name, calls.Load())
		}
	}
}

func TestHTTPReaderConfig(t *testing.T) {
	for _, u := range []string{"", "ftp://x", "localhost:80", "http://"} {
		if _, err := NewHTTP(u); !errors.Is(err, ErrConfig) {
			t.Errorf("URL %q: %v", u, err)
		}
	}
	for name, o := range map[string]HTTPOption{
		"timeout": WithTimeout(0), "retries": WithRetries(-1), "backoff": WithBackoff(-1),
		"client": WithHTTPClient(nil), "shape": WithShape(0, 3), "parallel": WithParallel(0),
	} {
		if _, err := NewHTTP("http://127.0.0.1:1", o); !errors.Is(err, ErrConfig) {
			t.Errorf("%s: %v", name, err)
		}
	}
	r, _ := NewHTTP("http://127.0.0.1:1")
	if s, d := r.Shape(); s != 32 || d != 512 || r.Name() != "http:http://127.0.0.1:1" {
		t.Fatalf("defaults %d x %d, name %s", s, d, r.Name())
	}
	// Shape errors come before any request.
	states, qs := toyData(1, 1)
	if _, err := r.Bits(nil, states, qs); !errors.Is(err, ErrShape) {
		t.Fatalf("wrong shape: %v", err)
	}
}
