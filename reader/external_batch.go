package reader

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/memowm/memowm/trajectory"
)

// BatchProtocolVersion is the version of the batched protocol: one request
// carries many items (see the protocol in external.go).
const BatchProtocolVersion = 2

// DefaultBatch is how many items an HTTPReader sends per request unless
// WithBatch says otherwise; MaxBatch is the most WithBatch allows.
const (
	DefaultBatch = 64
	MaxBatch     = 4096
)

// BatchRequest is the JSON body of a version-2 request: Version is
// BatchProtocolVersion and each item a version-1 Request without Version.
type BatchRequest struct {
	Version int       `json:"version"`
	Items   []Request `json:"items"`
}

// BatchResponse is the JSON body a reader answers a version-2 request with:
// one Response object per item, in the items' order.
type BatchResponse struct {
	Results []json.RawMessage `json:"results"`
}

// WithBatch sets how many (state, question) items Bits and BitsEdits send in
// one request, 1..MaxBatch. Above 1 they speak protocol version 2; 1 speaks
// version 1, one request per item, for readers that only know version 1.
// Each request is retried (and timed, WithTimeout) as a whole. Default
// DefaultBatch.
func WithBatch(n int) HTTPOption {
	return func(r *HTTPReader) error {
		if n < 1 || n > MaxBatch {
			return fmt.Errorf("%w: batch %d outside 1..%d", ErrConfig, n, MaxBatch)
		}
		r.batch, r.explicit = n, true
		return nil
	}
}

// Batch is the number of items sent per request in protocol version 2.
func (r *HTTPReader) Batch() int { return r.batch }

// Protocol is the protocol version Bits and BitsEdits speak now: 1 with
// WithBatch(1), or after the reader refused a batch without WithBatch and
// answered version 1 (see NewHTTP); else 2.
func (r *HTTPReader) Protocol() int {
	if r.batch == 1 || r.v1only.Load() {
		return ProtocolVersion
	}
	return BatchProtocolVersion
}

// ScoreBatch asks the external reader for the answer bits of qs[i] given
// states[i], for every i, in one version-2 request with retries, whatever
// the batch size set by WithBatch. ctx bounds all attempts together. Errors
// name the item's index in qs.
func (r *HTTPReader) ScoreBatch(ctx context.Context, states [][]float32, qs []*trajectory.Question) ([]float64, error) {
	if len(states) != len(qs) {
		return nil, fmt.Errorf("%w: %d states for %d questions", ErrShape, len(states), len(qs))
	}
	dst := make([]float64, len(qs))
	if len(qs) == 0 {
		return dst, nil
	}
	return dst, r.scoreBatch(ctx, dst, states, qs, 0, "item")
}

// bitsBatched is Bits in batches of r.batch consecutive pairs.
func (r *HTTPReader) bitsBatched(dst []float64, states [][]float32, qs []*trajectory.Question) error {
	n := len(qs)
	return r.run((n+r.batch-1)/r.batch, func(b int) error {
		lo, hi := b*r.batch, min(n, (b+1)*r.batch)
		return r.scoreOrFallBack(context.Background(), dst[lo:hi], states[lo:hi], qs[lo:hi], lo, "question")
	})
}

// editsBatched is BitsEdits in batches of r.batch edits, each edited state
// made when its batch is sent.
func (r *HTTPReader) editsBatched(dst []float64, base []float32, q *trajectory.Question, edits []SlotEdit) error {
	n := len(edits)
	return r.run((n+r.batch-1)/r.batch, func(b int) error {
		lo, hi := b*r.batch, min(n, (b+1)*r.batch)
		states := make([][]float32, hi-lo)
		qs := make([]*trajectory.Question, hi-lo)
		for k := range states {
			states[k], qs[k] = r.edited(base, edits[lo+k]), q
		}
		return r.scoreOrFallBack(context.Background(), dst[lo:hi], states, qs, lo, "edit")
	})
}

// scoreOrFallBack is scoreBatch, or one version-1 request per item when the
// reader speaks only version 1: known from an earlier batch, or found now
// (a batch refused, then the first item answered in version 1) when the
// batch size is the default. Errors name item i as what and first+i.
func (r *HTTPReader) scoreOrFallBack(ctx context.Context, dst []float64, states [][]float32, qs []*trajectory.Question, first int, what string) error {
	var refused error
	if !r.v1only.Load() {
		err := r.scoreBatch(ctx, dst, states, qs, first, what)
		if err == nil || r.explicit || !errors.As(err, new(refusedError)) {
			return err
		}
		refused = err
	}
	for i := range qs {
		b, err := r.Score(ctx, states[i], qs[i])
		dst[i] = b
		if err != nil {
			if refused != nil {
				return fmt.Errorf("%w (%s %d, in version 1 after the version 2 batch was refused: %v)", err, what, first+i, refused)
			}
			return fmt.Errorf("%w (%s %d)", err, what, first+i)
		}
		if refused != nil {
			r.v1only.Store(true)
			refused = nil
		}
	}
	return nil
}

// scoreBatch sends states and qs (one item each) in one version-2 request
// and sets dst to the bits. Errors name item i as what and first+i.
func (r *HTTPReader) scoreBatch(ctx context.Context, dst []float64, states [][]float32, qs []*trajectory.Question, first int, what string) error {
	req := BatchRequest{Version: BatchProtocolVersion, Items: make([]Request, len(qs))}
	ans := make([]int, len(qs))
	for i := range qs {
		var err error
		if req.Items[i], ans[i], err = r.request(states[i], qs[i]); err != nil {
			return fmt.Errorf("%w (%s %d)", err, what, first+i)
		}
	}
	body, err := json.Marshal(&req)
	if err != nil {
		return fmt.Errorf("reader: encoding request: %w", err)
	}
	span := fmt.Sprintf("%s %d", what, first)
	if len(qs) > 1 {
		span = fmt.Sprintf("%ss %d..%d", what, first, first+len(qs)-1)
	}
	hint := fmt.Sprintf(" (a protocol version 2 batch of %d items; a reader that speaks only version 1 needs batch size 1)", len(qs))
	err = r.do(ctx, body, maxResponse+len(qs)*maxItemResponse, hint, func(data []byte) error {
		return parseBatch(data, dst, ans, qs, first, what)
	})
	if err != nil {
		return fmt.Errorf("%w (%s)", err, span)
	}
	return nil
}

// parseBatch turns a version-2 answer into dst, one result per item.
func parseBatch(data []byte, dst []float64, ans []int, qs []*trajectory.Question, first int, what string) error {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(data, &top); err != nil || top == nil {
		if err == nil {
			err = fmt.Errorf("null")
		}
		return fmt.Errorf("body is not a JSON batch response object (%v): %s", err, snippet(data))
	}
	raw, ok := top["results"]
	if !ok {
		_, bits := top["bits"]
		_, lp := top["logprobs"]
		if bits || lp {
			return refusedError{fmt.Errorf(`body has no "results" but a version-1 "bits" or "logprobs": the reader answered a version 2 batch as version 1 (a reader that speaks only version 1 needs batch size 1): %s`, snippet(data))}
		}
		return fmt.Errorf(`body has no "results": %s`, snippet(data))
	}
	var results []json.RawMessage
	if err := json.Unmarshal(raw, &results); err != nil || results == nil {
		return fmt.Errorf(`"results" is not a JSON array: %s`, snippet(raw))
	}
	if len(results) != len(qs) {
		return fmt.Errorf(`"results" has %d entries for %d items (%ss %d..%d)`, len(results), len(qs), what, first, first+len(qs)-1)
	}
	for i, res := range results {
		if t := bytes.TrimSpace(res); len(t) == 0 || t[0] != '{' {
			return fmt.Errorf(`results[%d] (%s %d) is not a JSON object: %s`, i, what, first+i, snippet(res))
		}
		b, err := parseResponse(res, ans[i], len(qs[i].Choices), "result")
		if err != nil {
			return fmt.Errorf("results[%d] (%s %d): %w", i, what, first+i, err)
		}
		dst[i] = b
	}
	return nil
}
