package recording

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
)

// maxLine is the longest line of a JSON Lines file: a 1024 x 1024 screen of
// escaped characters fits.
const maxLine = 64 << 20

// readLines calls fn with each line of the JSON Lines file at path, numbered
// from 1. Blank lines are allowed only at the end of the file. It returns the
// number of lines given to fn. Errors name the file and line.
func readLines(path string, fn func(line int, b []byte) error) (int, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, fmt.Errorf("recording: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), maxLine)
	n, blank := 0, 0
	for line := 1; sc.Scan(); line++ {
		b := bytes.TrimSpace(sc.Bytes())
		if len(b) == 0 {
			if blank == 0 {
				blank = line
			}
			continue
		}
		if blank > 0 {
			return n, fmt.Errorf("recording: %s line %d is empty (one JSON object per line, no blank lines)", path, blank)
		}
		if err := fn(line, b); err != nil {
			return n, fmt.Errorf("recording: %s line %d: %w", path, line, err)
		}
		n++
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return n, fmt.Errorf("recording: %s line %d is longer than %d bytes", path, n+1, maxLine)
		}
		return n, fmt.Errorf("recording: %s: %w", path, err)
	}
	return n, nil
}

// decodeStrict decodes one JSON value from b into v: unknown fields and
// anything after the value are errors.
func decodeStrict(b []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return jsonErr(err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return errors.New("unexpected data after the JSON object")
	}
	return nil
}

// jsonErr rewords encoding/json's errors without the Go type names.
func jsonErr(err error) error {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		if te.Field != "" {
			return fmt.Errorf("field %q: JSON %s where %s is expected", te.Field, te.Value, goType(te.Type.String()))
		}
		return fmt.Errorf("JSON %s where %s is expected", te.Value, goType(te.Type.String()))
	}
	msg := strings.TrimPrefix(err.Error(), "json: ")
	if err == io.EOF || err == io.ErrUnexpectedEOF {
		msg = "incomplete JSON"
	}
	return errors.New(msg)
}

func goType(t string) string {
	switch {
	case strings.HasPrefix(t, "[]"):
		return "an array"
	case strings.HasPrefix(t, "map[") || strings.Contains(t, "."):
		return "an object"
	case t == "string":
		return "a string"
	case strings.HasPrefix(t, "float"):
		return "a number"
	case strings.HasPrefix(t, "int") || strings.HasPrefix(t, "uint"):
		return "an integer"
	case t == "bool":
		return "a boolean"
	}
	return t
}
