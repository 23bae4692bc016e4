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
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/memowm/memowm/trajectory"
)

// The external reader protocol (docs/reader-protocol.md is the full text;
// reader/reference/server.py is a worked example using only Python's
// standard library).
//
// Version 1: for every (state, question) pair, HTTPReader POSTs one JSON
// object (Content-Type: application/json) to its URL:
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
// Version 2 (BatchProtocolVersion, the default: WithBatch) carries up to
// WithBatch items in one POST, each a version-1 request object without
// "version", and the reader answers one result per item, in order:
//
//	{"version": 2, "items": [ {"episode": 3, ..., "state": {...}}, ... ]}
//	{"results": [ {"bits": 0.37}, {"logprobs": [-2.1, -0.1]}, ... ]}
//
// Status 408, 429 and 5xx, timeouts and connection errors are retried with
// exponential backoff, a whole request (a whole batch) at a time; the error
// after the last attempt wraps ErrUnavailable. Any other status, a body that
// is not JSON, a missing field, both fields, a negative bits value, logprobs
// of the wrong length, a results list of the wrong length or a result that is
// not an object wrap ErrResponse, naming the result's index and its question.
// A reader should answer a request it cannot read with 400 and
// {"error": "what is wrong"}: the error shows that string.
const ProtocolVersion = 1

// Request is the JSON body HTTPReader sends.
type Request struct {
	// Version is ProtocolVersion; 0 (omitted) in the items of a batch.
	Version  int          `json:"version,omitempty"`
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
		r.client, r.ownClient = c, false
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

// WithParallel sets how many requests (batches, with WithBatch above 1)
// Bits and BitsEdits keep in flight. The results are the same, in the same
// order, whatever n is. Default 1.
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
	name       string
	client     *http.Client
	ownClient  bool // client was made by NewHTTP, not given by WithHTTPClient
	timeout    time.Duration
	retries    int
	backoff    time.Duration
	jsonState  bool
	slots, dim int
	parallel   int
	batch      int
	explicit   bool        // batch was set by WithBatch: no fallback to version 1
	v1only     atomic.Bool // the reader refused a version-2 batch and answered version 1
}

const maxBackoff = 10 * time.Second

// maxResponse bounds the body read from an external reader for one
// version-1 request; a batch may add maxItemResponse per item.
const (
	maxResponse     = 1 << 20
	maxItemResponse = 64 << 10
)

// NewHTTP returns a reader that POSTs to rawURL, an http or https URL with a
// host (for example http://127.0.0.1:8080/score). A URL that is not one is
// refused with an error wrapping ErrConfig that says what is wrong with it.
// The defaults: shape trajectory.DefaultShape, batches of DefaultBatch items
// (protocol version 2; WithBatch(1) speaks version 1), one request in flight,
// a 30 s timeout per attempt, 3 retries from 250 ms of backoff. Without
// WithBatch, a reader that refuses the first version-2 batch (a 4xx status
// other than 408 and 429, or a version-1 answer) and then answers its items
// in version 1 is spoken to in version 1 from then on (see Protocol).
func NewHTTP(rawURL string, opts ...HTTPOption) (*HTTPReader, error) {
	name, err := checkURL(rawURL)
	if err != nil {
		return nil, err
	}
	r := &HTTPReader{url: rawURL, name: name, ownClient: true, timeout: 30 * time.Second, retries: 3,
		backoff: 250 * time.Millisecond, slots: trajectory.DefaultShape.Slots, dim: trajectory.DefaultShape.Dim,
		parallel: 1, batch: DefaultBatch}
	for _, o := range opts {
		if err := o(r); err != nil {
			return nil, err
		}
	}
	if r.ownClient {
		// Keep one idle connection per request in flight, not the default 2.
		t := http.DefaultTransport.(*http.Transport).Clone()
		t.MaxIdleConnsPerHost = max(r.parallel, 2)
		r.client = &http.Client{Transport: t}
	}
	return r, nil
}

// checkURL says what is wrong with a reader URL, or returns the reader's
// name: "http:" and the URL, its password (if any) masked.
func checkURL(rawURL string) (string, error) {
	bad := func(why string) error {
		return fmt.Errorf("%w: reader URL %q is not an http(s) URL: %s (want e.g. http://127.0.0.1:8080/)", ErrConfig, rawURL, why)
	}
	if strings.TrimSpace(rawURL) == "" {
		return "", fmt.Errorf("%w: reader URL is empty (want e.g. http://127.0.0.1:8080/)", ErrConfig)
	}
	u, err := url.Parse(rawURL)
	switch {
	case err != nil:
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		if !strings.Contains(rawURL, "://") {
			return "", bad(err.Error() + "; a host and port need http:// in front")
		}
		return "", bad(err.Error())
	case u.Scheme == "":
		return "", bad("no scheme")
	case u.Scheme != "http" && u.Scheme != "https":
		if u.Opaque != "" { // "localhost:8080" parses as scheme "localhost"
			return "", bad(fmt.Sprintf("scheme %q (a host and port need http:// in front)", u.Scheme))
		}
		return "", bad(fmt.Sprintf("scheme %q", u.Scheme))
	case u.Host == "" || u.Hostname() == "":
		return "", bad("no host")
	case u.Fragment != "":
		return "", bad("a #fragment is never sent")
	}
	if p := u.Port(); p != "" {
		if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
			return "", bad(fmt.Sprintf("port %s outside 1..65535", p))
		}
	}
	if _, ok := u.User.Password(); ok {
		return "http:" + u.Redacted(), nil
	}
	return "http:" + rawURL, nil
}

// Name is "http:" and the URL (with any password masked), which identifies
// the server in what is measured with it. It does not depend on the batch
// size or the options: they do not change the bits.
func (r *HTTPReader) Name() string { return r.name }

// Shape is the state geometry sent.
func (r *HTTPReader) Shape() (slots, dim int) { return r.slots, r.dim }

// Bits implements Reader: one version-1 request per pair with WithBatch(1),
// else version-2 batches of consecutive pairs. The bits do not depend on the
// batch size or WithParallel (for a reader that answers each item alone).
func (r *HTTPReader) Bits(dst []float64, states [][]float32, qs []*trajectory.Question) ([]float64, error) {
	if len(states) != len(qs) {
		return nil, fmt.Errorf("%w: %d states for %d questions", ErrShape, len(states), len(qs))
	}
	dst = grow(dst, len(qs))
	if r.batch > 1 {
		return dst, r.bitsBatched(dst, states, qs)
	}
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

// BitsEdits implements Reader by sending each edited state in full, an item
// per edit (batched like Bits).
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
	if r.batch > 1 {
		return dst, r.editsBatched(dst, base, q, edits)
	}
	err := r.run(len(edits), func(k int) error {
		b, err := r.Score(context.Background(), r.edited(base, edits[k]), q)
		dst[k] = b
		if err != nil {
			return fmt.Errorf("%w (edit %d)", err, k)
		}
		return nil
	})
	return dst, err
}

// edited returns a copy of base with e applied.
func (r *HTTPReader) edited(base []float32, e SlotEdit) []float32 {
	x := append([]float32(nil), base...)
	copy(x[e.Slot*r.dim:], e.Values)
	return x
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

// request makes the request item for (state, q), without its version, and
// returns the answer's index.
func (r *HTTPReader) request(state []float32, q *trajectory.Question) (Request, int, error) {
	if err := checkState(state, r.slots, r.dim, "state"); err != nil {
		return Request{}, 0, err
	}
	ans, err := answerIndex(q)
	if err != nil {
		return Request{}, 0, err
	}
	req := Request{Episode: q.Episode, Step: q.Step, Kind: q.Kind, Subject: q.Subject,
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
	return req, ans, nil
}

// Score asks the external reader for the answer bits of q given state in one
// version-1 request, with retries. ctx bounds all attempts together.
func (r *HTTPReader) Score(ctx context.Context, state []float32, q *trajectory.Question) (float64, error) {
	req, ans, err := r.request(state, q)
	if err != nil {
		return 0, err
	}
	req.Version = ProtocolVersion
	body, err := json.Marshal(&req)
	if err != nil {
		return 0, fmt.Errorf("reader: encoding request: %w", err)
	}
	var bits float64
	err = r.do(ctx, body, maxResponse, "", func(data []byte) (err error) {
		bits, err = parseResponse(data, ans, len(q.Choices), "body")
		return err
	})
	return bits, err
}

// do POSTs body with retries and hands a 200 answer to parse, whose error
// wraps ErrResponse and is not retried. limit bounds the answer's length;
// hint is added to a non-retryable status's error.
func (r *HTTPReader) do(ctx context.Context, body []byte, limit int, hint string, parse func([]byte) error) error {
	wait := r.backoff
	var last error
	for attempt := 0; attempt <= r.retries; attempt++ {
		if attempt > 0 {
			select {
			case <-ctx.Done():
				return fmt.Errorf("%w: %s: %w (after %d attempts; last: %w)", ErrUnavailable, r.url, ctx.Err(), attempt, last)
			case <-time.After(wait):
			}
			wait = min(2*wait, maxBackoff)
		}
		data, retry, err := r.attempt(ctx, body, limit, hint)
		if err == nil {
			if err := parse(data); err != nil {
				return fmt.Errorf("%w: %s: %w", ErrResponse, r.url, err)
			}
			return nil
		}
		if !retry {
			return err
		}
		last = err
	}
	return fmt.Errorf("%w: %s: %d attempts failed, last: %w", ErrUnavailable, r.url, r.retries+1, last)
}

// attempt sends one request and returns a 200 answer's body; retry says
// whether a failure is worth another attempt.
func (r *HTTPReader) attempt(ctx context.Context, body []byte, limit int, hint string) (data []byte, retry bool, err error) {
	ctx, cancel := context.WithTimeout(ctx, r.timeout)
	defer cancel()
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, r.url, bytes.NewReader(body))
	if err != nil {
		return nil, false, fmt.Errorf("reader: %w", err)
	}
	hreq.Header.Set("Content-Type", "application/json")
	resp, err := r.client.Do(hreq)
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			return nil, true, fmt.Errorf("timeout after %v: %w", r.timeout, err)
		}
		return nil, true, err // connection errors
	}
	defer resp.Body.Close()
	data, err = io.ReadAll(io.LimitReader(resp.Body, int64(limit)+1))
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			return nil, true, fmt.Errorf("timeout after %v reading the response: %w", r.timeout, err)
		}
		return nil, true, fmt.Errorf("reading the response: %w", err)
	}
	switch {
	case resp.StatusCode == http.StatusRequestTimeout || resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode >= 500:
		return nil, true, fmt.Errorf("status %s: %s", resp.Status, errorText(data))
	case resp.StatusCode != http.StatusOK:
		return nil, false, refusedError{fmt.Errorf("%w: %s: status %s: %s%s", ErrResponse, r.url, resp.Status, errorText(data), hint)}
	case len(data) > limit:
		return nil, false, fmt.Errorf("%w: %s: response longer than %d bytes", ErrResponse, r.url, limit)
	}
	return data, false, nil
}

// parseResponse turns a response object (a version-1 body, or one result of
// a batch; noun names it in errors) into the answer's bits.
func parseResponse(data []byte, ans, choices int, noun string) (float64, error) {
	var resp Response
	if err := json.Unmarshal(data, &resp); err != nil {
		return 0, fmt.Errorf("%s is not a JSON response object (%v): %s", noun, err, snippet(data))
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
	return 0, fmt.Errorf(`%s has neither "bits" nor "logprobs": %s`, noun, snippet(data))
}

// refusedError is a non-retryable status, or a version-1 answer to a
// version-2 request: what a reader that speaks only version 1 answers a
// batch with.
type refusedError struct{ err error }

func (e refusedError) Error() string { return e.err.Error() }
func (e refusedError) Unwrap() error { return e.err }

// snippet shows the start of a body in an error message: its text, cut at
// 200 bytes, with anything unprintable escaped ("(empty body)" if none).
func snippet(b []byte) string {
	const n = 200
	s := strings.TrimSpace(string(b))
	if s == "" {
		return "(empty body)"
	}
	cut := len(s) > n
	if cut {
		k := n
		for k > n-utf8.UTFMax && !utf8.RuneStart(s[k]) {
			k-- // not in the middle of a rune
		}
		s = s[:k]
	}
	var sb strings.Builder
	for _, r := range s {
		switch {
		case r == utf8.RuneError:
			sb.WriteString(`\ufffd`)
		case unicode.IsPrint(r):
			sb.WriteRune(r)
		default:
			q := strconv.QuoteRune(r)
			sb.WriteString(q[1 : len(q)-1])
		}
	}
	if cut {
		sb.WriteString("...")
	}
	return sb.String()
}

// errorText shows a refused request's body: the "error" string of a JSON
// object with one (the protocol's advice for a 4xx), else snippet.
func errorText(b []byte) string {
	var e struct {
		Error *string `json:"error"`
	}
	if json.Unmarshal(b, &e) == nil && e.Error != nil && *e.Error != "" {
		return snippet([]byte(*e.Error))
	}
	return snippet(b)
}
