package worldmodel

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"unicode/utf8"
)

// stEntry is one tensor of a safetensors header.
type stEntry struct {
	name       string
	dtype      string
	shape      []uint64
	begin, end uint64
}

// stHeader is a parsed safetensors header: its tensors in header order and
// its metadata (nil when absent).
type stHeader struct {
	entries []stEntry
	meta    map[string]string
}

// stFormat is an ErrFormat error about a safetensors file.
func stFormat(format string, args ...any) error {
	return fmt.Errorf("%w: safetensors: %s", ErrFormat, fmt.Sprintf(format, args...))
}

// parseSafetensorsHeader parses the JSON header of a safetensors file:
// an object whose keys are tensor names and "__metadata__", each key once,
// followed only by whitespace.
func parseSafetensorsHeader(b []byte) (*stHeader, error) {
	if len(b) == 0 || b[0] != '{' {
		return nil, stFormat("the header does not start with '{'")
	}
	if !utf8.Valid(b) {
		return nil, stFormat("the header is not UTF-8")
	}
	keys, vals, rest, err := objectFields(b)
	if err != nil {
		return nil, stFormat("header: %v", err)
	}
	if len(bytes.Trim(rest, " \t\r\n")) != 0 {
		return nil, stFormat("header: data after the JSON object")
	}
	h := &stHeader{}
	for i, k := range keys {
		if k == "__metadata__" {
			if h.meta, err = parseMetadata(vals[i]); err != nil {
				return nil, err
			}
			continue
		}
		e, err := parseEntry(k, vals[i])
		if err != nil {
			return nil, err
		}
		h.entries = append(h.entries, e)
	}
	return h, nil
}

// objectFields splits the JSON object at the start of b into its keys and
// raw values, in order, refusing a key that appears twice (encoding/json
// would keep the last one silently), and returns the bytes after it.
func objectFields(b []byte) (keys []string, vals []json.RawMessage, rest []byte, err error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, nil, nil, fmt.Errorf("not a JSON object")
	}
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, nil, nil, err
		}
		k, ok := tok.(string)
		if !ok {
			return nil, nil, nil, fmt.Errorf("a key that is not a string")
		}
		if seen[k] {
			return nil, nil, nil, fmt.Errorf("key %q appears twice", k)
		}
		seen[k] = true
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, nil, nil, fmt.Errorf("the value of %q: %v", k, err)
		}
		keys, vals = append(keys, k), append(vals, v)
	}
	if tok, err := dec.Token(); err != nil || tok != json.Delim('}') {
		if err == nil || err == io.EOF {
			err = fmt.Errorf("unterminated object")
		}
		return nil, nil, nil, err
	}
	return keys, vals, b[dec.InputOffset():], nil
}

// parseMetadata parses "__metadata__": an object of strings.
func parseMetadata(raw json.RawMessage) (map[string]string, error) {
	keys, vals, _, err := objectFields(raw)
	if err != nil {
		return nil, stFormat("__metadata__: %v", err)
	}
	meta := make(map[string]string, len(keys))
	for i, k := range keys {
		var s string
		if v := bytes.TrimSpace(vals[i]); len(v) == 0 || v[0] != '"' || json.Unmarshal(v, &s) != nil {
			return nil, stFormat("__metadata__ %q: the value is not a string", k)
		}
		meta[k] = s
	}
	return meta, nil
}

// parseEntry parses one tensor's {"dtype", "shape", "data_offsets"}.
func parseEntry(name string, raw json.RawMessage) (stEntry, error) {
	e := stEntry{name: name}
	keys, vals, _, err := objectFields(raw)
	if err != nil {
		return e, stFormat("tensor %q: %v", name, err)
	}
	var have [3]bool
	for i, k := range keys {
		var err error
		switch k {
		case "dtype":
			have[0] = true
			err = json.Unmarshal(vals[i], &e.dtype)
		case "shape":
			have[1] = true
			err = json.Unmarshal(vals[i], &e.shape)
			if err == nil && e.shape == nil {
				err = fmt.Errorf("null")
			}
		case "data_offsets":
			have[2] = true
			var off []uint64
			if err = json.Unmarshal(vals[i], &off); err == nil && len(off) != 2 {
				err = fmt.Errorf("%d numbers, not [begin, end]", len(off))
			}
			if err == nil {
				e.begin, e.end = off[0], off[1]
			}
		default:
			return e, stFormat("tensor %q: unknown field %q", name, k)
		}
		if err != nil {
			return e, stFormat("tensor %q: %s: %v", name, k, err)
		}
	}
	for i, k := range []string{"dtype", "shape", "data_offsets"} {
		if !have[i] {
			return e, stFormat("tensor %q has no %s", name, k)
		}
	}
	if e.begin > e.end {
		return e, stFormat("tensor %q: data_offsets [%d, %d] end before they begin", name, e.begin, e.end)
	}
	return e, nil
}
