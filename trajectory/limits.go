package trajectory

import (
	"fmt"

	"github.com/apache/arrow-go/v18/arrow/memory"
)

// Reader limits for hostile input. Counts and lengths read from a file are
// checked against the file's size before anything is allocated from them;
// what cannot be checked that way (the decompressed size of a Parquet page or
// a compressed Arrow buffer) is bounded by MaxAlloc.

// DefaultMaxAlloc is the largest single buffer a Reader allocates for a file
// of size bytes unless WithMaxAlloc says otherwise: 64 MiB plus 64 times the
// file's size. Decoding a trajectory file never needs a buffer near it: a
// record batch of 64 default states is 4 MiB, and Snappy expands data at
// most about 21-fold.
func DefaultMaxAlloc(size int64) int64 { return 64<<20 + 64*max(size, 0) }

// Option configures a Reader.
type Option func(*readOptions) error

type readOptions struct {
	maxAlloc int64 // 0: DefaultMaxAlloc
	quant    func(dst []uint8, state []float32) error
	codes    int
}

// WithQuantize makes a Reader of a states file turn every state into codes
// as it reads the state's record batch, so episodes come back with Codes and
// no States: an episode of any length is never held as states (64 KiB per
// default observation), only as codes. q is given one or more consecutive
// states (a record batch's valid rows at once, so that it can work on a
// matrix) and writes codes values per state into dst. Each state is
// validated before q sees it and checksummed as its row is read; an error
// from q names the episode and step. Meta still describes the file (content
// States). On a codes file the option does nothing.
func WithQuantize(codes int, q func(dst []uint8, state []float32) error) Option {
	return func(o *readOptions) error {
		if codes <= 0 || q == nil {
			return fmt.Errorf("trajectory: WithQuantize(%d, ...): want a positive code count and a function", codes)
		}
		o.quant, o.codes = q, codes
		return nil
	}
}

// WithMaxAlloc caps any single buffer the Reader allocates while decoding at
// n bytes (default DefaultMaxAlloc of the file's size). A file that asks for
// more is an error wrapping ErrLimit.
func WithMaxAlloc(n int64) Option {
	return func(o *readOptions) error {
		if n <= 0 {
			return fmt.Errorf("trajectory: WithMaxAlloc(%d): the cap must be positive", n)
		}
		o.maxAlloc = n
		return nil
	}
}

func newReadOptions(size int64, opts []Option) (readOptions, error) {
	var o readOptions
	for _, opt := range opts {
		if err := opt(&o); err != nil {
			return o, err
		}
	}
	if o.maxAlloc == 0 {
		o.maxAlloc = DefaultMaxAlloc(size)
	}
	return o, nil
}

// cappedAllocator refuses single allocations over max. arrow-go has no way
// to return an allocation error, so it panics with a limitError, which the
// Reader recovers into an error wrapping ErrLimit.
type cappedAllocator struct {
	memory.Allocator
	max int64
}

type limitError struct{ want, max int64 }

func (e limitError) Error() string {
	return fmt.Sprintf("the file asks for a %d-byte buffer, more than the %d-byte cap on a single buffer (WithMaxAlloc; memowm's --max-alloc): a file this size may need it; raise the cap if you trust the file", e.want, e.max)
}

func (e limitError) Unwrap() error { return ErrLimit }

func (a *cappedAllocator) Allocate(size int) []byte {
	if int64(size) > a.max {
		panic(limitError{int64(size), a.max})
	}
	return a.Allocator.Allocate(size)
}

func (a *cappedAllocator) Reallocate(size int, b []byte) []byte {
	if int64(size) > a.max {
		panic(limitError{int64(size), a.max})
	}
	return a.Allocator.Reallocate(size, b)
}
