package recording

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"sort"
)

// parseFacts checks one observation's facts, a flat JSON object whose values
// are strings, numbers or booleans, and returns it in canonical form: compact,
// keys sorted, numbers as written, no HTML escaping.
func parseFacts(b []byte) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		return nil, jsonErr(err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("unexpected data after the JSON object")
	}
	if m == nil {
		return nil, errors.New("facts are null, want a JSON object ({} for none)")
	}
	return canonicalFacts(m)
}

// canonicalFacts checks that every value of m is a string, a number or a
// boolean and marshals m compactly with sorted keys.
func canonicalFacts(m map[string]any) ([]byte, error) {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		switch m[k].(type) {
		case string, bool, json.Number,
			float64, float32, int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64:
		case nil:
			return nil, fmt.Errorf("fact %q is null (facts are strings, numbers or booleans)", k)
		default:
			return nil, fmt.Errorf("fact %q is %s (facts are flat: strings, numbers or booleans)", k, kindOf(m[k]))
		}
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(m); err != nil {
		return nil, fmt.Errorf("facts: %w", err)
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

func kindOf(v any) string {
	switch reflect.ValueOf(v).Kind() {
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.Map, reflect.Struct:
		return "an object"
	}
	return fmt.Sprintf("a %T", v)
}

// FactValues decodes one observation's facts (a flat JSON object, as
// trajectory.Episode.Facts holds them) into strings: strings as they are,
// numbers as written, booleans as "true" or "false". Values of any other kind
// are left out.
func FactValues(b []byte) (map[string]string, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		return nil, fmt.Errorf("recording: facts: %w", jsonErr(err))
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		switch v := v.(type) {
		case string:
			out[k] = v
		case json.Number:
			out[k] = v.String()
		case bool:
			if v {
				out[k] = "true"
			} else {
				out[k] = "false"
			}
		}
	}
	return out, nil
}
