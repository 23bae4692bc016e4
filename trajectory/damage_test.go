package trajectory

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"reflect"
	"runtime"
	"testing"
)

// Damage tests: flip bits and truncate small memowm-written files, and read
// them from memory. A read must never panic; it must give an error or the
// original content, and for checksummed files (Arrow, Parquet) never other
// content. NPY exports and questions carry no checksum: their changed content
// is counted, not failed.

type outcome int

const (
	outError outcome = iota
	outSame
	outDiff
	outPanic
)

var outcomeNames = [...]string{"error", "identical", "different", "panic"}

// damageKind reads one kind of file from memory into comparable content.
type damageKind struct {
	ext       string
	checksums bool // different content is a failure
	read      func(b []byte, seeds map[string][]byte) (any, error)
}

var damageKinds = []damageKind{
	{".arrow", true, func(b []byte, _ map[string][]byte) (any, error) { return readContent(b, Arrow) }},
	{".parquet", true, func(b []byte, _ map[string][]byte) (any, error) { return readContent(b, Parquet) }},
	{".npy", false, func(b []byte, s map[string][]byte) (any, error) { return summarizeNPYBytes(b, s[".index.npy"]) }},
	{".index.npy", false, func(b []byte, s map[string][]byte) (any, error) { return summarizeNPYBytes(s[".npy"], b) }},
	{".questions.jsonl", false, func(b []byte, _ map[string][]byte) (any, error) {
		return DecodeQuestions(bytes.NewReader(b), "damaged.questions.jsonl")
	}},
}

type content struct {
	Meta     Meta
	Episodes []*Episode
}

func readContent(b []byte, f Format) (any, error) {
	m, eps, ok, err := readBytes(b, f)
	if err == nil && !ok {
		err = errors.New("the file lost its checksums and still read")
	}
	return content{m, eps}, err
}

// classify reads b and compares it with want, turning a panic into outPanic.
func classify(k damageKind, b []byte, seeds map[string][]byte, want any) (o outcome, err error) {
	defer func() {
		if p := recover(); p != nil {
			o, err = outPanic, fmt.Errorf("panic: %v", p)
		}
	}()
	got, err := k.read(b, seeds)
	switch {
	case err != nil:
		return outError, err
	case reflect.DeepEqual(got, want):
		return outSame, nil
	}
	return outDiff, nil
}

// damage flips every stride-th bit and truncates at every tstride-th length
// of each kind's seed file, failing on panics and on changed content where the
// kind has checksums. It returns the counts per outcome for each kind.
func damage(t *testing.T, stride, tstride int) map[string][4]int {
	seeds := seedFiles(t, smallShape, 3)
	counts := map[string][4]int{}
	for _, k := range damageKinds {
		orig := seeds[k.ext]
		want, err := k.read(orig, seeds)
		if err != nil {
			t.Fatalf("%s: the undamaged file does not read: %v", k.ext, err)
		}
		clean := allocated(func() { k.read(orig, seeds) })
		var c [4]int
		var most uint64 // bytes allocated by the hungriest damaged read
		check := func(what string, b []byte) {
			var o outcome
			var err error
			if n := allocated(func() { o, err = classify(k, b, seeds, want) }); n > most {
				most = n
			}
			c[o]++
			if o == outPanic || o == outDiff && k.checksums {
				t.Errorf("%s %s: %s (%v)", k.ext, what, outcomeNames[o], err)
			}
			if o == outError && !bytes.HasPrefix([]byte(err.Error()), []byte("trajectory: ")) {
				t.Errorf("%s %s: error %q lacks the package prefix", k.ext, what, err)
			}
		}
		b := append([]byte(nil), orig...)
		for bit := 0; bit < 8*len(orig); bit += stride {
			b[bit/8] ^= 1 << (bit % 8)
			check(fmt.Sprintf("bit %d flipped", bit), b)
			b[bit/8] ^= 1 << (bit % 8)
		}
		for n := 0; n < len(orig); n += tstride {
			check(fmt.Sprintf("truncated to %d bytes", n), orig[:n])
		}
		counts[k.ext] = c
		// Damage never makes a read allocate without bound: the hungriest
		// damaged read stays within the single-buffer cap of its file size.
		t.Logf("%-17s the hungriest damaged read allocated %d bytes in all (the undamaged read %d; DefaultMaxAlloc %d)", k.ext, most, clean, DefaultMaxAlloc(int64(len(orig))))
		if most > uint64(DefaultMaxAlloc(int64(len(orig)))) {
			t.Errorf("%s: a damaged read allocated %d bytes, more than DefaultMaxAlloc", k.ext, most)
		}
	}
	return counts
}

// allocated returns the bytes f allocates (all goroutines: run alone).
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

func TestDamagedBitsAndTruncation(t *testing.T) {
	// Odd strides reach every bit position within a byte.
	stride, tstride := 37, 61
	if testing.Short() {
		stride, tstride = 97, 127
	}
	counts := damage(t, stride, tstride)
	for ext, c := range counts {
		t.Logf("%-17s error %5d  identical %5d  different %5d  panic %d", ext, c[0], c[1], c[2], c[3])
		if c[outError] == 0 {
			t.Errorf("%s: no damage was detected", ext)
		}
	}
}

// TestDamageCampaign flips every bit and truncates at every length of one small
// file of each kind. It takes a minute or two; run it with
//
//	MEMOWM_CAMPAIGN=1 go test ./trajectory -run TestDamageCampaign -v -timeout 30m
func TestDamageCampaign(t *testing.T) {
	if os.Getenv("MEMOWM_CAMPAIGN") == "" {
		t.Skip("set MEMOWM_CAMPAIGN=1 to flip every bit")
	}
	seeds := seedFiles(t, smallShape, 3)
	counts := damage(t, 1, 1)
	for _, k := range damageKinds {
		c := counts[k.ext]
		t.Logf("%-17s %6d bytes: error %6d  identical %6d  different %6d  panic %d", k.ext, len(seeds[k.ext]), c[0], c[1], c[2], c[3])
	}
}

// TestDamagedSnappyLength: the flip the campaign found in the seed Parquet
// file's first compressed page (its Snappy stream then declared about 887 MB)
// is an error without the allocation (boundedSnappy).
func TestDamagedSnappyLength(t *testing.T) {
	seeds := seedFiles(t, smallShape, 3)
	b := append([]byte(nil), seeds[".parquet"]...)
	const bit = 24983
	b[bit/8] ^= 1 << (bit % 8)
	var err error
	n := allocated(func() { _, err = readContent(b, Parquet) })
	if err == nil || n > 16<<20 {
		t.Fatalf("bit %d flipped: %v after allocating %d bytes", bit, err, n)
	}
	t.Logf("bit %d flipped: %v (%d bytes allocated)", bit, err, n)
}
