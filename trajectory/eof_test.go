package trajectory

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
)

// End-of-data tests: the CLI's read loops stop on errors.Is(err, io.EOF), so
// a damaged file must never give an error that wraps io.EOF. One bit flipped
// in an 8-episode Parquet file's footer once gave "tried reading from file,
// but got error: EOF" after 6 episodes, which those loops took for the end of
// the file: memowm encode, quantize, fit opq and bench exited 0 on 6 of 8
// episodes.

// eofFile is one undamaged file of the end-of-data tests.
type eofFile struct {
	name   string
	ext    string
	b      []byte
	want   []*Episode // as read back
	strict bool       // damage must give an error or identical episodes (checksummed files)
}

// eofFiles writes 8 episodes as memowm does (checksummed) and as other tools
// do (no checksums: memowm's columns, and DuckDB's list column), in both
// formats.
func eofFiles(t *testing.T) []eofFile {
	t.Helper()
	m := Meta{Shape: tinyShape, Content: States}
	eps := testEpisodes(m, 8, 3)
	dir := t.TempDir()
	plain := foreign{list: "fixed", elemName: "item", elem: arrow.PrimitiveTypes.Float32, memowm: true}
	duck := duckdbStates
	duck.memowm = true // KV_METADATA: the shape, 2x2, is not the default's
	var out []eofFile
	for _, ext := range []string{".parquet", ".arrow"} {
		for _, f := range []struct {
			name   string
			write  func(p string)
			strict bool
		}{
			{"memowm", func(p string) { writeFile(t, p, m, eps) }, true},
			{"unchecksummed", func(p string) { plain.write(t, p, m, eps) }, false},
			{"duckdb", func(p string) { duck.write(t, p, m, eps) }, false},
		} {
			p := filepath.Join(dir, f.name+ext)
			f.write(p)
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			_, got, sums, err := readBytes(b, formatOfExt(ext))
			if err != nil || len(got) != len(eps) || sums != f.strict {
				t.Fatalf("%s%s: the undamaged file reads %d episodes (checksums %v), %v", f.name, ext, len(got), sums, err)
			}
			out = append(out, eofFile{f.name, ext, b, got, f.strict})
		}
	}
	return out
}

func formatOfExt(ext string) Format {
	if ext == ".arrow" {
		return Arrow
	}
	return Parquet
}

// footerLen is the length of the file's footer, its length field and its
// magic: Parquet ends with the footer, its 4-byte length and "PAR1"; Arrow
// IPC with the footer, its 4-byte length and "ARROW1".
func footerLen(b []byte, ext string) int {
	tail := 8
	if ext == ".arrow" {
		tail = 10
	}
	if len(b) < tail {
		return len(b)
	}
	n := int(binary.LittleEndian.Uint32(b[len(b)-tail:])) + tail
	return min(n, len(b))
}

// checkEnd reads b to the end. It fails on an error that wraps io.EOF (a read
// loop would end quietly), on an error without the package prefix, and on a
// read without error that lost episodes, or, for a checksummed file, that
// changed any content. It returns whether the read was an error.
func checkEnd(t *testing.T, what string, b []byte, f eofFile) bool {
	t.Helper()
	_, got, _, err := readBytes(b, formatOfExt(f.ext))
	if err == nil {
		if f.strict && !reflect.DeepEqual(got, f.want) {
			t.Errorf("%s: read without error but not every episode unchanged (%d of %d episodes)", what, len(got), len(f.want))
		}
		if !f.strict && !sameEpisodes(got, f.want) {
			t.Errorf("%s: read without error but %d episodes, want %d with the same ids and lengths", what, len(got), len(f.want))
		}
		return false
	}
	if errors.Is(err, io.EOF) {
		t.Errorf("%s: after %d of %d episodes the error wraps io.EOF, so a read loop ends quietly: %v", what, len(got), len(f.want), err)
	}
	var ve *ValidationError
	if !strings.HasPrefix(err.Error(), "trajectory: ") || !errors.Is(err, ErrFormat) && !errors.As(err, &ve) {
		t.Errorf("%s: error %q lacks the package prefix, or is neither ErrFormat nor a *ValidationError", what, err)
	}
	return true
}

// sameEpisodes says whether got holds want's episodes, by id and length.
func sameEpisodes(got, want []*Episode) bool {
	if len(got) != len(want) {
		return false
	}
	for i := range got {
		if got[i].ID != want[i].ID || got[i].Len() != want[i].Len() {
			return false
		}
	}
	return true
}

// TestFooterDamageNeverEOF flips bits of each file's footer (its length and
// magic included) and truncates the file, and reads each damaged file to its
// end. It flips every bit of the last 64 bytes and a sample of the footer's
// other bits (an odd stride, so that every bit position is met): about 1,000
// flips per Parquet file (a read takes about 1.5 ms of CPU there, with its 8
// row groups) and 2,500 per Arrow file, a fifth of that with -short; every
// 17th truncation (every 61st with -short). MEMOWM_CAMPAIGN=1 flips every bit
// of every footer and truncates at every length (minutes):
//
//	MEMOWM_CAMPAIGN=1 go test ./trajectory -run TestFooterDamageNeverEOF -v -timeout 30m
func TestFooterDamageNeverEOF(t *testing.T) {
	const tail = 64
	budget := map[string]int{".parquet": 1000, ".arrow": 2500}
	tstride := 17
	campaign := os.Getenv("MEMOWM_CAMPAIGN") != ""
	switch {
	case campaign:
		tstride = 1
	case testing.Short():
		budget[".parquet"], budget[".arrow"], tstride = 200, 500, 61
	}
	for _, f := range eofFiles(t) {
		what := f.name + f.ext
		n := footerLen(f.b, f.ext)
		stride := 1
		if !campaign {
			stride = max(1, 8*n/budget[f.ext]) | 1
		}
		b := append([]byte(nil), f.b...)
		flips, errs := 0, 0
		for bit := 8 * (len(b) - n); bit < 8*len(b); {
			b[bit/8] ^= 1 << (bit % 8)
			if checkEnd(t, fmt.Sprintf("%s bit %d flipped", what, bit), b, f) {
				errs++
			}
			b[bit/8] ^= 1 << (bit % 8)
			flips++
			if bit < 8*(len(b)-tail) {
				bit += stride
			} else {
				bit++
			}
		}
		cuts := 0
		for k := 0; k < len(f.b); k += tstride {
			if !checkEnd(t, fmt.Sprintf("%s truncated to %d bytes", what, k), f.b[:k], f) {
				t.Errorf("%s truncated to %d bytes: read without error", what, k)
			}
			cuts++
		}
		rest := "read unchanged"
		if !f.strict {
			rest = "read every episode (ids and lengths; no checksums to check the rest)"
		}
		t.Logf("%-21s %5d bytes, footer %4d: %5d of %5d flips (every %d) are errors, the rest %s; %4d truncations, all errors",
			what, len(f.b), n, errs, flips, stride, rest, cuts)
	}
}

// TestNotEOF: an error whose chain holds io.EOF loses it and keeps the rest.
func TestNotEOF(t *testing.T) {
	inner := fmt.Errorf("parquet: tried reading from file, but got error: %w", io.EOF)
	err := notEOF(fmt.Errorf("trajectory: x.parquet: %w: %w", ErrFormat, fmt.Errorf("%w: %w", ErrLimit, inner)))
	if errors.Is(err, io.EOF) || !errors.Is(err, io.ErrUnexpectedEOF) || !errors.Is(err, ErrFormat) || !errors.Is(err, ErrLimit) {
		t.Fatalf("%v: io.EOF %v, ErrFormat %v, ErrLimit %v", err, errors.Is(err, io.EOF), errors.Is(err, ErrFormat), errors.Is(err, ErrLimit))
	}
	if err.Error() != "trajectory: x.parquet: not a valid trajectory file: exceeds a reader limit: parquet: tried reading from file, but got error: EOF" {
		t.Fatalf("message %q", err)
	}
	var ve *ValidationError
	if !errors.As(notEOF(fmt.Errorf("%w: %w", invalid(3, 4, "x"), io.EOF)), &ve) || ve.Episode != 3 {
		t.Fatal("the *ValidationError was lost")
	}
	if plain := errors.New("other"); notEOF(plain) != plain || notEOF(nil) != nil {
		t.Fatal("an error without io.EOF changed")
	}
}

// TestParquetRowsCounted: bits of the footer of a Parquet file without
// checksums (found by the campaign) after whose flip pqarrow's record reader
// ends quietly, after 6 of the 8 episodes or none: the rows delivered fall
// short of the rows the metadata counts, which is an error naming both.
// Without the count these files read as shorter files, without an error.
func TestParquetRowsCounted(t *testing.T) {
	cases := map[string][]struct {
		bit  int
		want string
	}{
		"unchecksummed": {{106528, "after 36 rows, but the file's metadata counts 44 rows"}, {67912, "after 0 rows, but the file's metadata counts 44 rows"}},
		"duckdb":        {{107296, "after 36 rows, but the file's metadata counts 44 rows"}, {68680, "after 0 rows, but the file's metadata counts 44 rows"}},
	}
	size := map[string]int{"unchecksummed": 15249, "duckdb": 15345}
	for _, f := range eofFiles(t) {
		if f.ext != ".parquet" || cases[f.name] == nil {
			continue
		}
		if len(f.b) != size[f.name] {
			t.Fatalf("%s.parquet has %d bytes, not %d: its layout changed (another arrow-go?); find bits that cut it short again with MEMOWM_CAMPAIGN=1", f.name, len(f.b), size[f.name])
		}
		for _, c := range cases[f.name] {
			b := append([]byte(nil), f.b...)
			b[c.bit/8] ^= 1 << (c.bit % 8)
			_, got, _, err := readBytes(b, Parquet)
			if err == nil || errors.Is(err, io.EOF) || !errors.Is(err, ErrFormat) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("%s.parquet bit %d flipped: %d episodes, error %v; want %q", f.name, c.bit, len(got), err, c.want)
			}
		}
	}
}

// TestArrowFooterBlocksCounted: a bit of the footer of an Arrow file without
// checksums (found by the campaign) after whose flip the footer lists no
// record batches; the stream before the footer holds 8, which is an error.
// Without the walk of the stream the file read as a file of no episodes.
func TestArrowFooterBlocksCounted(t *testing.T) {
	bits := map[string]int{"unchecksummed": 84453, "duckdb": 87013}
	size := map[string]int{"unchecksummed": 11866, "duckdb": 12170}
	for _, f := range eofFiles(t) {
		if f.ext != ".arrow" || bits[f.name] == 0 {
			continue
		}
		if len(f.b) != size[f.name] {
			t.Fatalf("%s.arrow has %d bytes, not %d: its layout changed (another arrow-go?); find such bits again with MEMOWM_CAMPAIGN=1", f.name, len(f.b), size[f.name])
		}
		b := append([]byte(nil), f.b...)
		bit := bits[f.name]
		b[bit/8] ^= 1 << (bit % 8)
		_, got, _, err := readBytes(b, Arrow)
		const want = "the footer lists 0 record batches, the stream before it holds 8"
		if err == nil || errors.Is(err, io.EOF) || !errors.Is(err, ErrFormat) || !strings.Contains(err.Error(), want) {
			t.Fatalf("%s.arrow bit %d flipped: %d episodes, error %v; want %q", f.name, bit, len(got), err, want)
		}
	}
}

// TestParquetFooterWalk: the flip the damage test found in the seed Parquet
// file turns the header of FileMetaData's key_value_metadata (a list) into a
// bool's; arrow-go's Thrift reader then skipped the rest of the footer (the
// checksums, the stored Arrow schema, created_by), and the file read as
// another tool's, unchecked. checkParquetFooter makes it an error.
func TestParquetFooterWalk(t *testing.T) {
	seed := seedFiles(t, smallShape, 3)[".parquet"]
	if err := checkParquetFooter(bytes.NewReader(seed), int64(len(seed))); err != nil {
		t.Fatalf("undamaged: %v", err)
	}
	b := append([]byte(nil), seed...)
	const bit = 56203
	b[bit/8] ^= 1 << (bit % 8)
	_, _, _, err := readBytes(b, Parquet)
	const want = "field 5 of FileMetaData has compact type 1, not 9"
	if err == nil || !errors.Is(err, ErrFormat) || !strings.Contains(err.Error(), want) {
		t.Fatalf("bit %d flipped: %v, want %q", bit, err, want)
	}
	// Every truncation of the footer (kept whole at its end, so that the
	// length field and magic are right) is an error, never a panic.
	n := footerLen(seed, ".parquet") - 8
	for k := 0; k < n; k++ {
		c := append(append([]byte(nil), seed[:len(seed)-8-n+k]...), make([]byte, 8)...)
		binary.LittleEndian.PutUint32(c[len(c)-8:], uint32(k))
		copy(c[len(c)-4:], "PAR1")
		if err := checkParquetFooter(bytes.NewReader(c), int64(len(c))); err == nil {
			t.Fatalf("footer cut to %d of %d bytes: no error", k, n)
		}
	}
}
