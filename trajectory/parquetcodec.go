package trajectory

import (
	"fmt"

	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/klauspost/compress/snappy"
)

// boundedSnappy is arrow-go's Snappy codec with one check before decoding: a
// page's Snappy stream declares its decoded length, and that length must fit
// the page's uncompressed size (dst, sized from the page header). Without
// it, one flipped bit in that length made a damaged file's page allocate 887
// MB (the trajectory damage campaign found it); with it, such a page is an
// error before anything is allocated.
type boundedSnappy struct{ compress.Codec }

func (c boundedSnappy) DecodeWithError(dst, src []byte) ([]byte, error) {
	n, err := snappy.DecodedLen(src)
	if err != nil {
		return nil, err
	}
	if n > len(dst) {
		return nil, fmt.Errorf("snappy: the stream declares %d bytes, more than the page's %d", n, len(dst))
	}
	return snappy.Decode(dst, src)
}

func (c boundedSnappy) Decode(dst, src []byte) []byte {
	out, err := c.DecodeWithError(dst, src)
	if err != nil {
		panic(err) // compress.Decode prefers DecodeWithError; a caller of Decode recovers
	}
	return out
}

// The registration is process-wide (arrow-go keeps one codec per kind); it
// only adds a check.
func init() {
	if c, err := compress.GetCodec(compress.Codecs.Snappy); err == nil {
		compress.RegisterCodec(compress.Codecs.Snappy, boundedSnappy{c})
	}
}
