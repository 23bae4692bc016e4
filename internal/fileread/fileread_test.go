package fileread

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
)

// readN reads a one-byte length n, then n bytes, and reports the size it was given.
func readN(r io.Reader, avail int64) ([]byte, error) {
	var n [1]byte
	if _, err := io.ReadFull(r, n[:]); err != nil {
		return nil, err
	}
	if avail >= 0 && int64(n[0]) > avail-1 {
		return nil, errors.New("longer than the file")
	}
	b := make([]byte, n[0])
	_, err := io.ReadFull(r, b)
	return b, err
}

func TestLoad(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, b ...byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	if b, err := Load(write("ok", 2, 'h', 'i'), readN); err != nil || string(b) != "hi" {
		t.Fatalf("ok: %q %v", b, err)
	}
	if _, err := Load(write("long", 2, 'h', 'i', '!'), readN); !errors.Is(err, ErrTrailing) {
		t.Fatalf("trailing byte: %v", err)
	}
	if _, err := Load(write("big", 9, 'h'), readN); err == nil || err.Error() != "longer than the file" {
		t.Fatalf("the reader did not get the size: %v", err)
	}
	var oe *OpenError
	if _, err := Load(filepath.Join(dir, "missing"), readN); !errors.As(err, &oe) || !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("missing: %v", err)
	}
}

func TestAvailable(t *testing.T) {
	r := bytes.NewReader(make([]byte, 10))
	for _, c := range []struct {
		r    io.Reader
		want int64
	}{
		{r, 10},
		{&io.LimitedReader{R: r, N: 4}, 4},
		{&io.LimitedReader{R: r, N: 40}, 10},
		{&io.LimitedReader{R: os.Stdin, N: 7}, 7},
		{&io.LimitedReader{R: r, N: -3}, 0},
		{os.Stdin, -1},
	} {
		if got := Available(c.r); got != c.want {
			t.Fatalf("%T: %d, want %d", c.r, got, c.want)
		}
	}
}

func TestHasMagic(t *testing.T) {
	p := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(p, []byte("MAGICrest"), 0o644); err != nil {
		t.Fatal(err)
	}
	if !HasMagic(p, "MAGIC") || HasMagic(p, "MAGIX") || HasMagic(p, "MAGICrest and more") || HasMagic(p+"-missing", "M") {
		t.Fatal("HasMagic")
	}
}
