package reader

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"sync"
	"time"

	"github.com/memowm/memowm/trajectory"
)

// The external reader protocol, version 1.
//
// For every (state, question) pair, HTTPReader POSTs one JSON object
// (Content-Type: application/json) to its URL:
//
//	{
//	  "version":  1,
//	  "episode":  3, "step": 7,
//	  "kind":     "typed",
//	  "subject":  "field:email",
//	  "question": "What was typed into the email field?",
//	  "choices":  ["kiwi", "plum", ...],
//	  "answer":   "plum",
//	  "state":    {"slots": 32, "dim": 512, "encoding": "f32le-base64", "data": "AACAPw..."}
//	}
//
// The state is the decoded observation, slot-major (value c of slot s at
// s*dim+c). By default it travels as "f32le-base64": the Slots*Dim float32
// values, little-endian, base64 (standard alphabet, padded). With
// WithJSONState it travels as {"slots": 32, "dim": 512, "values": [ ... ]}.
//
// The reader answers 200 with a JSON object holding exactly one of
//
//	{"bits": 0.37}                 the answer loss -log2 P(answer), >= 0
//	{"logprobs": [-2.1, -0.1, ...]} one finite log-score per choice, in order
//
// Log-scores are natural logs and need not be normalised: the adapter takes
// bits = (logsumexp(logprobs) - logprobs[answer]) / ln 2, the answer's loss
// under a softmax over the choices. Other fields are ignored.
//
// Status 408, 429 and 5xx, timeouts and connection errors are retried with
// exponential backoff; the error after the last attempt wraps ErrUnavailable.
// Any other status, a body that is not JSON, a missing field, both fields, a
// negative bits value or logprobs of the wrong length wrap ErrResponse.
const ProtocolVersion = 1

// Request is the JSON body HTTPReader sends.
type Request struct {
	Version  int          `json:"version"`
	Episode  int64        `json:"episode"`
	Step     int          `json:"step"`
	Kind     string       `json:"kind"`
	Subject  string       `json:"subject"`
	Question string       `json:"question"`
	Choices  []string     `json:"choices"`
	Answer   string       `json:"answer"`
	State    RequestState `json:"state"`
}

// RequestState is a state in a Request: Data (with Encoding "f32le-base64")
// or Values.
type RequestState struct {
	Slots    int       `json:"slots"`
	Dim      int       `json:"dim"`
	Encoding string    `json:"encoding,omitempty"`
	Data     string    `json:"data,omitempty"`
	Values   []float32 `json:"values,omitempty"`
}

// Response is the JSON body an external reader answers with.
type Response struct {
	Bits     *float64  `json:"bits,omitempty"`
	LogProbs []float64 `json:"logprobs,omitempty"`
}

// StateValues decodes a request's state into Slots*Dim values.
func (s *RequestState) StateValues() ([]float32, error) {
	n := s.Slots * s.Dim
	if s.Encoding == "" {
		if len(s.Values) != n {
			return nil, fmt.Errorf("%w: %d values for %d x %d", ErrShape, len(s.Values), s.Slots, s.Dim)
		}
		return s.Values, nil
	}
	if s.Encoding != "f32le-base64" {
		return nil, fmt.Errorf("%w: unknown state encoding %q", ErrShape, s.Encoding)
	}
	b, err := base64.StdEncoding.DecodeString(s.Data)
	if err != nil || len(b) != 4*n {
		return nil, fmt.Errorf("%w: state data is not %d base64 float32 values", ErrShape, n)
	}
	v := make([]float32, n)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return v, nil
}

// HTTPOption configures an HTTPReader.
type HTTPOption func(*HTTPReader) error

// WithTimeout bounds each attempt (connect, send, answer). Default 30 s.
func WithTimeout(d time.Duration) HTTPOption {
	return func(r *HTTPReader) error {
		if d <= 0 {
			return fmt.Errorf("%w: timeout %v", ErrConfig, d)
		}
		r.timeout = d
		return nil
	}
}

// WithRetries sets how many times a failed attempt (timeout, 408, 429, 5xx,
// connection error) is retried. Default 3.
func WithRetries(n int) HTTPOption {
	return func(r *HTTPReader) error {
		if n < 0 {
			return fmt.Errorf("%w: retries %d", ErrConfig, n)
		}
		r.retries = n
		return nil
	}
}

// WithBackoff sets the wait before the first retry, doubled for each later
// one up to 10 s. Default 250 ms.
func WithBackoff(d time.Duration) HTTPOption {
	return func(r *HTTPReader) error {
		if d < 0 {
			return fmt.Errorf("%w: backoff %v", ErrConfig, d)
		}
		r.backoff = d
		return nil
	}
}

// WithHTTPClient sets the client. Default: a new http.Client.
func WithHTTPClient(c *http.Client) HTTPOption {
	return func(r *HTTPReader) error {
		if c == nil {
			return fmt.Errorf("%w: nil client", ErrConfig)
		}
		r.client = c
		return nil
	}
}

// WithJSONState sends states as a JSON array of values instead of base64.
func WithJSONState() HTTPOption {
	return func(r *HTTPReader) error { r.jsonState = true; return nil }
}

// WithShape sets the state geometry. Default trajectory.DefaultShape (32 x 512).
func WithShape(slots, dim int) HTTPOption {
	return func(r *HTTPReader) error {
		if slots < 1 || dim < 1 || slots > maxSlots || dim > maxDim {
			return fmt.Errorf("%w: shape %d x %d", ErrConfig, slots, dim)
		}
		r.slots, r.dim = slots, dim
		return nil
	}
}

// WithParallel sets how many requests Bits and BitsEdits keep in flight.
// Default 1.
func WithParallel(n int) HTTPOption {
	return func(r *HTTPReader) error {
		if n < 1 {
			return fmt.Errorf("%w: parallel %d", ErrConfig, n)
		}
		r.parallel = n
		return nil
	}
}

// HTTPReader is a Reader served by an external process over HTTP (see the
// protocol above). It is safe for concurrent use.
type HTTPReader struct {
	url        string
	client     *http.Client
	timeout    time.Duration
	retries    int
	backoff    time.Duration
	jsonState  bool
	slots, dim int
	parallel   int
}

const maxBackoff = 10 * time.Second

// maxResponse bounds the body read from an external reader.
const maxResponse = 1 << 20

// NewHTTP returns a reader that POSTs to rawURL (http or https).
func NewHTTP(rawURL string, opts ...HTTPOption) (*HTTPReader, error) {
	u, err := url.Parse(rawURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("%w: reader URL %q is not an http(s) URL", ErrConfig, rawURL)
	}
	r := &HTTPReader{url: rawURL, client: &http.Client{}, timeout: 30 * time.Second, retries: 3,
		backoff: 250 * time.Millisecond, slots: trajectory.DefaultShape.Slots, dim: trajectory.DefaultShape.Dim, parallel: 1}
	for _, o := range opts {
		if err := o(r); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// Name is "http:" and the URL.
func (r *HTTPReader) Name() string { return "http:" + r.url }

// Shape is the state geometry sent.
func (r *HTTPReader) Shape() (slots, dim int) { return r.slots, r.dim }

// Bits implements Reader with one request per pair.
func (r *HTTPReader) Bits(dst []float64, states [][]float32, qs []*trajectory.Question) ([]float64, error) {
	if len(states) != len(qs) {
		return nil, fmt.Errorf("%w: %d states for %d questions", ErrShape, len(states), len(qs))
	}
	dst = grow(dst, len(qs))
	err := r.run(len(qs), func(i int) error {
		b, err := r.Score(context.Background(), states[i], qs[i])
		dst[i] = b
		if err != nil {
			return fmt.Errorf("%w (question %d)", err, i)
		}
		return nil
	})
	return dst, err
}

// BitsEdits implements Reader by sending each edited state in full.
func (r *HTTPReader) BitsEdits(dst []float64, base []float32, q *trajectory.Question, edits []SlotEdit) ([]float64, error) {
	if err := checkState(base, r.slots, r.dim, "base state"); err != nil {
		return nil, err
	}
	for k, e := range edits {
		if err := checkEdit(e, k, r.slots, r.dim); err != nil {
			return nil, err
		}
	}
	dst = grow(dst, len(edits))
	err := r.run(len(edits), func(k int) error {
		x := append([]float32(nil), base...)
		copy(x[edits[k].Slot*r.dim:], edits[k].Values)
		b, err := r.Score(context.Background(), x, q)
		dst[k] = b
		if err != nil {
			return fmt.Errorf("%w (edit %d)", err, k)
		}
		return nil
	})
	return dst, err
}

// run calls fn(i) for i < n with up to r.parallel in flight and returns the
// error of the lowest failing index.
func (r *HTTPReader) run(n int, fn func(i int) error) error {
	errs := make([]error, n)
	sem := make(chan struct{}, r.parallel)
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			errs[i] = fn(i)
		})
	}
	wg.Wait()
	return firstErr(errs)
}

func firstErr(errs []error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// Score asks the external reader for the answer bits of q given state, with
// retries. ctx bounds all attempts together.
func (r *HTTPReader) Score(ctx context.Context, state []float32, q *trajectory.Question) (float64, error) {
	if err := checkState(state, r.slots, r.dim, "state"); err != nil {
		return 0, err
	}
	ans, err := answerIndex(q)
	if err != nil {
		return 0, err
	}
	req := Request{Version: ProtocolVersion, Episode: q.Episode, Step: q.Step, Kind: q.Kind, Subject: q.Subject,
		Question: q.Text, Choices: q.Choices, Answer: q.Answer, State: RequestState{Slots: r.slots, Dim: r.dim}}
	if r.jsonState {
		req.State.Values = state
	} else {
		b := make([]byte, 4*len(state))
		for i, v := range state {
			binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(v))
		}
		req.State.Encoding, req.State.Data = "f32le-base64", base64.StdEncoding.EncodeToString(b)
	}
	body, err := json.Marshal(&req)
	if err != nil {
		return 0, fmt.Errorf("reader: encoding request: %w", err)
	}
	wait := r.backoff
	var last error
	for attempt := 0; attempt <= r.retries; attempt++ {
		if attempt > 0 {
			select {
			case <-ctx.Done():
				return 0, fmt.Errorf("%w: %s: %w (after %d attempts; last: %w)", ErrUnavailable, r.url, ctx.Err(), attempt, last)
			case <-time.After(wait):
			}
			wait = min(2*wait, maxBackoff)
		}
		bits, retry, err := r.attempt(ctx, body, ans, len(q.Choices))
		if err == nil {
			return bits, nil
		}
		if !retry {
			return 0, err
		}
		last = err
	}
	return 0, fmt.Errorf("%w: %s: %d attempts failed, last: %w", ErrUnavailable, r.url, r.retries+1, last)
}

// attempt sends one request; retry says whether a failure is worth another
// attempt.
func (r *HTTPReader) attempt(ctx context.Context, body []byte, ans, choices int) (bits float64, retry bool, err error) {
	ctx, cancel := context.WithTimeout(ctx, r.timeout)
	defer cancel()
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, r.url, bytes.NewReader(body))
	if err != nil {
		return 0, false, fmt.Errorf("reader: %w", err)
	}
	hreq.Header.Set("Content-Type", "application/json")
	resp, err := r.client.Do(hreq)
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			return 0, true, fmt.Errorf("timeout after %v: %w", r.timeout, err)
		}
		return 0, true, err // connection errors
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxResponse+1))
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			return 0, true, fmt.Errorf("timeout after %v reading the response: %w", r.timeout, err)
		}
		return 0, true, fmt.Errorf("reading the response: %w", err)
	}
	switch {
	case resp.StatusCode == http.StatusRequestTimeout || resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode >= 500:
		return 0, true, fmt.Errorf("status %s: %s", resp.Status, snippet(data))
	case resp.StatusCode != http.StatusOK:
		return 0, false, fmt.Errorf("%w: %s: status %s: %s", ErrResponse, r.url, resp.Status, snippet(data))
	case len(data) > maxResponse:
		return 0, false, fmt.Errorf("%w: %s: response longer than %d bytes", ErrResponse, r.url, maxResponse)
	}
	bits, err = parseResponse(data, ans, choices)
	if err != nil {
		return 0, false, fmt.Errorf("%w: %s: %s", ErrResponse, r.url, err)
	}
	return bits, false, nil
}

// parseResponse turns a 200 body into the answer's bits.
func parseResponse(data []byte, ans, choices int) (float64, error) {
	var resp Response
	if err := json.Unmarshal(data, &resp); err != nil {
		return 0, fmt.Errorf("body is not a JSON response object (%v): %s", err, snippet(data))
	}
	switch {
	case resp.Bits != nil && resp.LogProbs != nil:
		return 0, errors.New(`both "bits" and "logprobs" are set`)
	case resp.Bits != nil:
		b := *resp.Bits
		if math.IsNaN(b) || math.IsInf(b, 0) || b < 0 {
			return 0, fmt.Errorf(`"bits" is %v, want a finite value >= 0`, b)
		}
		return b, nil
	case resp.LogProbs != nil:
		lp := resp.LogProbs
		if len(lp) != choices {
			return 0, fmt.Errorf(`"logprobs" has %d values for %d choices`, len(lp), choices)
		}
		mx := math.Inf(-1)
		for i, v := range lp {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return 0, fmt.Errorf(`"logprobs"[%d] is %v`, i, v)
			}
			mx = max(mx, v)
		}
		s := 0.0
		for _, v := range lp {
			s += math.Exp(v - mx)
		}
		return (mx + math.Log(s) - lp[ans]) / math.Ln2, nil
	}
	return 0, fmt.Errorf(`response has neither "bits" nor "logprobs": %s`, snippet(data))
}

func snippet(b []byte) string {
	const n = 120
	if len(b) > n {
		return fmt.Sprintf("%q...", b[:n])
	}
	return fmt.Sprintf("%q", b)
}
