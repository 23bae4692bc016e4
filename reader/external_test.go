package reader

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
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

// echoBits is what the echo servers answer: |sum of the state| + len(choices).
func echoBits(x []float32, q *Request) float64 {
	return math.Abs(stateSum(x)) + float64(len(q.Choices))
}

// echoServer answers {"bits": echoBits} to version-1 requests and, when v2,
// {"results": [...]} to version-2 batches; anything else gets 400. calls
// counts the requests.
func echoServer(t *testing.T, v2 bool, calls *atomic.Int32) *httptest.Server {
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if calls != nil {
			calls.Add(1)
		}
		if r.Method != http.MethodPost || r.Header.Get("Content-Type") != "application/json" {
			http.Error(w, "bad method", http.StatusBadRequest)
			return
		}
		body, _ := io.ReadAll(r.Body)
		var v struct{ Version int }
		if err := json.Unmarshal(body, &v); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		one := func(req *Request) (float64, bool) {
			x, err := req.State.StateValues()
			return echoBits(x, req), err == nil && req.Answer != ""
		}
		switch {
		case v.Version == ProtocolVersion:
			var req Request
			json.Unmarshal(body, &req)
			if b, ok := one(&req); ok {
				json.NewEncoder(w).Encode(map[string]float64{"bits": b})
				return
			}
		case v.Version == BatchProtocolVersion && v2:
			var req BatchRequest
			json.Unmarshal(body, &req)
			var resp struct {
				Results []map[string]float64 `json:"results"`
			}
			for i := range req.Items {
				b, ok := one(&req.Items[i])
				if !ok || req.Items[i].Version != 0 {
					http.Error(w, "bad item", http.StatusBadRequest)
					return
				}
				resp.Results = append(resp.Results, map[string]float64{"bits": b})
			}
			json.NewEncoder(w).Encode(&resp)
			return
		}
		http.Error(w, "bad request", http.StatusBadRequest)
	}))
}

func TestHTTPReaderBits(t *testing.T) {
	var calls atomic.Int32
	srv := echoServer(t, true, &calls)
	defer srv.Close()
	a := toyArch()
	states, qs := toyData(12, 31)
	shape := WithShape(a.Slots, a.Dim)
	for _, c := range []struct {
		opts     []HTTPOption
		requests int32 // for Bits of 12 questions
	}{
		{[]HTTPOption{shape, WithBatch(1)}, 12},
		{[]HTTPOption{shape, WithBatch(1), WithJSONState(), WithParallel(4)}, 12},
		{[]HTTPOption{shape}, 1},
		{[]HTTPOption{shape, WithBatch(5), WithParallel(3)}, 3},
		{[]HTTPOption{shape, WithBatch(5), WithJSONState()}, 3},
	} {
		r, err := NewHTTP(srv.URL, c.opts...)
		if err != nil {
			t.Fatal(err)
		}
		calls.Store(0)
		bits, err := r.Bits(nil, states, qs)
		if err != nil {
			t.Fatal(err)
		}
		if calls.Load() != c.requests {
			t.Errorf("batch %d: %d requests for 12 questions, want %d", r.Batch(), calls.Load(), c.requests)
		}
		for i := range qs {
			want := math.Abs(stateSum(states[i])) + float64(len(qs[i].Choices))
			if math.Abs(bits[i]-want) > 1e-9*max(1, want) {
				t.Fatalf("question %d: %v bits, want %v", i, bits[i], want)
			}
		}
		edits := []SlotEdit{{Slot: 1, Values: states[1][a.Dim : 2*a.Dim]}, {Slot: 3, Values: states[2][3*a.Dim:]}, {Slot: 0, Values: states[3][:a.Dim]}}
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
		if r.Protocol() != min(r.Batch(), 2) {
			t.Errorf("batch %d speaks protocol %d", r.Batch(), r.Protocol())
		}
	}
}

// A reader that speaks only version 1 works with the default batch size: the
// first batch is refused, its items go one by one, and so does everything
// after. With an explicit batch size the refusal is an error that says so.
func TestHTTPReaderFallback(t *testing.T) {
	var calls atomic.Int32
	srv := echoServer(t, false, &calls)
	defer srv.Close()
	a := toyArch()
	states, qs := toyData(7, 5)
	r, _ := NewHTTP(srv.URL, WithShape(a.Slots, a.Dim), WithParallel(2))
	if r.Protocol() != 2 {
		t.Fatalf("protocol %d before any request", r.Protocol())
	}
	bits, err := r.Bits(nil, states, qs)
	if err != nil {
		t.Fatal(err)
	}
	if calls.Load() != 1+7 || r.Protocol() != 1 {
		t.Fatalf("%d requests, protocol %d; want 1 refused batch + 7, then 1", calls.Load(), r.Protocol())
	}
	for i := range qs {
		if want := math.Abs(stateSum(states[i])) + float64(len(qs[i].Choices)); math.Abs(bits[i]-want) > 1e-9*want {
			t.Fatalf("question %d: %v bits, want %v", i, bits[i], want)
		}
	}
	calls.Store(0)
	if _, err := r.Bits(nil, states, qs); err != nil || calls.Load() != 7 {
		t.Fatalf("second call: %d requests (want 7), %v", calls.Load(), err)
	}

	calls.Store(0)
	r, _ = NewHTTP(srv.URL, WithShape(a.Slots, a.Dim), WithBatch(8), WithBackoff(time.Millisecond))
	_, err = r.Bits(nil, states, qs)
	if !errors.Is(err, ErrResponse) || !strings.Contains(err.Error(), "batch size 1") || calls.Load() != 1 {
		t.Fatalf("explicit batch against a version-1 reader: %v after %d requests", err, calls.Load())
	}

	// A reader that answers a batch with a version-1 object is version 1 too.
	v1shape := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		io.WriteString(w, `{"bits": 0.25}`)
	}))
	defer v1shape.Close()
	calls.Store(0)
	r, _ = NewHTTP(v1shape.URL, WithShape(a.Slots, a.Dim))
	bits, err = r.Bits(nil, states[:3], qs[:3])
	if err != nil || calls.Load() != 4 || bits[2] != 0.25 || r.Protocol() != 1 {
		t.Fatalf("version-1 answer to a batch: bits %v, %v after %d requests", bits, err, calls.Load())
	}
	// When version 1 fails too, the error says both.
	none := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "no such endpoint", http.StatusNotFound)
	}))
	defer none.Close()
	r, _ = NewHTTP(none.URL, WithShape(a.Slots, a.Dim))
	_, err = r.Bits(nil, states[:3], qs[:3])
	if !errors.Is(err, ErrResponse) || !strings.Contains(err.Error(), "404") || !strings.Contains(err.Error(), "version 2 batch was refused") ||
		!strings.Contains(err.Error(), "question 0") || r.Protocol() != 2 {
		t.Fatalf("404 in both versions: %v (protocol %d)", err, r.Protocol())
	}
}

func TestHTTPReaderLogProbs(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `{"logprobs": [0, 1, 2], "note": "ignored"}`)
	}))
	defer srv.Close()
	r, _ := NewHTTP(srv.URL, WithShape(4, 16), WithBatch(1))
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
	r, _ := NewHTTP(srv.URL, WithShape(4, 16), WithBackoff(time.Millisecond), WithRetries(2), WithBatch(1))
	states, qs := toyData(1, 1)
	bits, err := r.Bits(nil, states, qs)
	if err != nil || bits[0] != 0.5 || calls.Load() != 3 {
		t.Fatalf("bits %v, err %v after %d calls; want 0.5 after 3", bits, err, calls.Load())
	}
}

// A batch is retried as a whole.
func TestHTTPReaderBatchRetries(t *testing.T) {
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req BatchRequest
		json.NewDecoder(r.Body).Decode(&req)
		if calls.Add(1) == 1 {
			http.Error(w, "busy", http.StatusServiceUnavailable)
			return
		}
		var out []string
		for i := range req.Items {
			out = append(out, fmt.Sprintf(`{"bits": %d}`, req.Items[i].Step))
		}
		fmt.Fprintf(w, `{"results": [%s]}`, strings.Join(out, ","))
	}))
	defer srv.Close()
	r, _ := NewHTTP(srv.URL, WithShape(4, 16), WithBackoff(time.Millisecond), WithRetries(2))
	states, qs := toyData(5, 1)
	bits, err := r.Bits(nil, states, qs)
	if err != nil || calls.Load() != 2 {
		t.Fatalf("err %v after %d calls; want 2", err, calls.Load())
	}
	for i, q := range qs {
		if bits[i] != float64(q.Step) {
			t.Fatalf("question %d: %v bits, want %d", i, bits[i], q.Step)
		}
	}
}

func TestHTTPReaderUnavailable(t *testing.T) {
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		http.Error(w, "down", http.StatusBadGateway)
	}))
	defer srv.Close()
	states, qs := toyData(1, 1)
	var r *HTTPReader
	for _, batch := range []int{1, DefaultBatch} {
		calls.Store(0)
		r, _ = NewHTTP(srv.URL, WithShape(4, 16), WithBackoff(time.Millisecond), WithRetries(3), WithBatch(batch))
		_, err := r.Bits(nil, states, qs)
		if !errors.Is(err, ErrUnavailable) || calls.Load() != 4 || !strings.Contains(err.Error(), "502") {
			t.Fatalf("batch %d: err %v after %d calls; want ErrUnavailable naming 502 after 4", batch, err, calls.Load())
		}
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
	r, _ := NewHTTP(srv.URL, WithShape(4, 16), WithTimeout(50*time.Millisecond), WithBackoff(time.Millisecond), WithRetries(1), WithBatch(1))
	start := time.Now()
	_, err := r.Bits(nil, states, qs)
	if !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), "timeout") {
		t.Fatalf("err %v, want ErrUnavailable after timeouts", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Fatalf("two 50 ms attempts took %v", d)
	}
	// The third call answers: a retry after a timeout succeeds.
	r2, _ := NewHTTP(srv.URL, WithShape(4, 16), WithTimeout(50*time.Millisecond), WithBackoff(time.Millisecond), WithRetries(2), WithBatch(1))
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
		r, _ := NewHTTP(srv.URL, WithShape(4, 16), WithBackoff(time.Millisecond), WithBatch(1))
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

// A bad batch answer wraps ErrResponse, names the result and its question
// (its index in the whole call), and is not retried.
func TestHTTPReaderBadBatchResponses(t *testing.T) {
	states, qs := toyData(7, 1)
	for i := range qs { // three choices each, answer "b"
		qs[i] = &trajectory.Question{Episode: 1, Step: i, Kind: "k", Subject: "s", Answer: "b", Choices: []string{"a", "b", "c"}}
	}
	good := `{"bits": 1}`
	cases := map[string]struct {
		status int
		body   string // the answer to the second batch, questions 4..6
		want   string
	}{
		"not json":       {200, `results`, "not a JSON batch response object"},
		"null":           {200, `null`, "not a JSON batch response object"},
		"array":          {200, `[{"bits": 1}]`, "not a JSON batch response object"},
		"no results":     {200, `{"answers": []}`, `no "results"`},
		"results null":   {200, `{"results": null}`, `"results" is not a JSON array`},
		"results object": {200, `{"results": {"bits": 1}}`, `"results" is not a JSON array`},
		"too few":        {200, `{"results": [` + good + `,` + good + `]}`, `"results" has 2 entries for 3 items (questions 4..6)`},
		"too many":       {200, `{"results": [` + good + `,` + good + `,` + good + `,` + good + `]}`, `has 4 entries for 3 items`},
		"number item":    {200, `{"results": [` + good + `, 2.5, ` + good + `]}`, `results[1] (question 5) is not a JSON object: 2.5 (questions 4..6)`},
		"null item":      {200, `{"results": [` + good + `,` + good + `, null]}`, `results[2] (question 6) is not a JSON object`},
		"empty item":     {200, `{"results": [` + good + `, {}, ` + good + `]}`, `results[1] (question 5): result has neither "bits" nor "logprobs"`},
		"short logprobs": {200, `{"results": [{"logprobs": [0, 1]},` + good + `,` + good + `]}`, `results[0] (question 4): "logprobs" has 2 values for 3 choices`},
		"negative bits":  {200, `{"results": [` + good + `,` + good + `, {"bits": -1}]}`, `results[2] (question 6): "bits" is -1`},
		"string bits":    {200, `{"results": [` + good + `, {"bits": "1"}, ` + good + `]}`, `results[1] (question 5): result is not a JSON response object`},
		"version 1":      {200, `{"bits": 1}`, `answered a version 2 batch as version 1`},
		"bad request":    {400, `{"error": "items[1]: no answer"}`, "400 Bad Request"},
	}
	for name, c := range cases {
		var calls atomic.Int32
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			calls.Add(1)
			var req BatchRequest
			if err := json.NewDecoder(r.Body).Decode(&req); err != nil || req.Version != 2 {
				http.Error(w, "not a batch", http.StatusTeapot)
				return
			}
			if req.Items[0].Step == 0 {
				io.WriteString(w, `{"results": [`+strings.Repeat(good+",", len(req.Items)-1)+good+`]}`)
				return
			}
			w.WriteHeader(c.status)
			io.WriteString(w, c.body)
		}))
		r, _ := NewHTTP(srv.URL, WithShape(4, 16), WithBackoff(time.Millisecond), WithBatch(4))
		bits, err := r.Bits(nil, states, qs)
		srv.Close()
		if !errors.Is(err, ErrResponse) || errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), "reader: ") {
			t.Errorf("%s: %v, want ErrResponse mentioning %q", name, err, c.want)
		} else if !strings.Contains(err.Error(), "(questions 4..6)") {
			t.Errorf("%s: %v does not name the batch's questions", name, err)
		}
		if calls.Load() != 2 || bits[0] != 1 {
			t.Errorf("%s: %d calls, bits %v; a bad response is not retried", name, calls.Load(), bits)
		}
	}
}

// Inputs are checked before anything is sent, and errors name the item.
func TestHTTPReaderBatchInputs(t *testing.T) {
	var calls atomic.Int32
	srv := echoServer(t, true, &calls)
	defer srv.Close()
	states, qs := toyData(6, 2)
	r, _ := NewHTTP(srv.URL, WithShape(4, 16), WithBatch(10))
	bad := append([]*trajectory.Question(nil), qs...)
	bad[4] = &trajectory.Question{Kind: "k", Answer: "x", Choices: []string{"a"}}
	if _, err := r.Bits(nil, states, bad); !errors.Is(err, ErrQuestion) || !strings.Contains(err.Error(), "(question 4)") {
		t.Errorf("bad question: %v", err)
	}
	nan := append([][]float32(nil), states...)
	nan[3] = append([]float32(nil), states[3]...)
	nan[3][17] = float32(math.NaN())
	if _, err := r.Bits(nil, nan, qs); !errors.Is(err, ErrShape) || !strings.Contains(err.Error(), "(question 3)") {
		t.Errorf("NaN state: %v", err)
	}
	if _, err := r.ScoreBatch(context.Background(), states[:2], qs); !errors.Is(err, ErrShape) {
		t.Errorf("ScoreBatch of 2 states for 6 questions: %v", err)
	}
	if calls.Load() != 0 {
		t.Errorf("%d requests sent for bad inputs", calls.Load())
	}
	// ScoreBatch is one version-2 request whatever the batch size.
	r1, _ := NewHTTP(srv.URL, WithShape(4, 16), WithBatch(1))
	bits, err := r1.ScoreBatch(context.Background(), states, qs)
	if err != nil || calls.Load() != 1 {
		t.Fatalf("ScoreBatch: %v after %d requests", err, calls.Load())
	}
	if want := mustBits(r1, states, qs); fmt.Sprint(bits) != fmt.Sprint(want) {
		t.Fatalf("ScoreBatch %v, Bits %v", bits, want)
	}
	// A cancelled context stops the retries.
	down := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "down", http.StatusServiceUnavailable)
	}))
	defer down.Close()
	rd, _ := NewHTTP(down.URL, WithShape(4, 16), WithBackoff(time.Hour))
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, err := rd.ScoreBatch(ctx, states, qs); !errors.Is(err, ErrUnavailable) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("cancelled: %v", err)
	}
}

func TestHTTPReaderConfig(t *testing.T) {
	for u, want := range map[string]string{
		"":                 "empty",
		"  ":               "empty",
		"ftp://x":          `scheme "ftp"`,
		"localhost:80":     "need http:// in front",
		"127.0.0.1:8080":   "cannot contain colon; a host and port need http:// in front",
		"http://":          "no host",
		"http://:8080/":    "no host",
		"/score":           "no scheme",
		"http://h:0/":      "port 0 outside",
		"http://h:99999/":  "port 99999 outside",
		"http://h/x#frag":  "fragment",
		"http://h:x/":      "invalid port",
		"http://[::1/":     "missing ']'",
		"https://h/\x00/": "invalid control character",
	} {
		_, err := NewHTTP(u)
		if !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), want) || !strings.HasPrefix(err.Error(), "reader: ") {
			t.Errorf("URL %q: %v, want ErrConfig mentioning %q", u, err, want)
		}
	}
	for name, o := range map[string]HTTPOption{
		"timeout": WithTimeout(0), "retries": WithRetries(-1), "backoff": WithBackoff(-1),
		"client": WithHTTPClient(nil), "shape": WithShape(0, 3), "parallel": WithParallel(0),
		"batch 0": WithBatch(0), "batch too big": WithBatch(MaxBatch + 1),
	} {
		if _, err := NewHTTP("http://127.0.0.1:1", o); !errors.Is(err, ErrConfig) {
			t.Errorf("%s: %v", name, err)
		}
	}
	r, _ := NewHTTP("http://127.0.0.1:1")
	if s, d := r.Shape(); s != 32 || d != 512 || r.Name() != "http:http://127.0.0.1:1" || r.Batch() != DefaultBatch || r.Protocol() != 2 {
		t.Fatalf("defaults %d x %d, name %s, batch %d, protocol %d", s, d, r.Name(), r.Batch(), r.Protocol())
	}
	// The name identifies the server, whatever the options, without a password.
	for u, want := range map[string]string{
		"https://reader.example:8443/v1/score?model=x": "http:https://reader.example:8443/v1/score?model=x",
		"http://me:secret@127.0.0.1:9/":                "http:http://me:xxxxx@127.0.0.1:9/",
		"http://me@127.0.0.1:9/":                       "http:http://me@127.0.0.1:9/",
	} {
		r, err := NewHTTP(u, WithBatch(3), WithParallel(2), WithJSONState())
		if err != nil || r.Name() != want {
			t.Errorf("%s: name %q (%v), want %q", u, r.Name(), err, want)
		}
	}
	// Shape errors come before any request.
	states, qs := toyData(1, 1)
	if _, err := r.Bits(nil, states, qs); !errors.Is(err, ErrShape) {
		t.Fatalf("wrong shape: %v", err)
	}
}

// Bodies in error messages are readable and safe: the server's "error"
// string for a refused request, control characters escaped, cut short.
func TestHTTPReaderSnippet(t *testing.T) {
	for body, want := range map[string]string{
		``:                                    "(empty body)",
		"  busy\n":                            "busy",
		`{"error": "items[2]: \"answer\" x"}`: `items[2]: "answer" x`,
		`{"error": 5}`:                        `{"error": 5}`,
		"a\x1b[31mb\tc\xffd":                  `a\x1b[31mb\tc\ufffdd`,
		strings.Repeat("é", 150):              strings.Repeat("é", 100) + "...",
		strings.Repeat("x", 199) + "é":        strings.Repeat("x", 199) + "...",
	} {
		if got := errorText([]byte(body)); got != want {
			t.Errorf("%q: %q, want %q", body, got, want)
		}
	}
}
