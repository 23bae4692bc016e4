package trajectory

import (
	"encoding/binary"
	"fmt"
	"io"
	"slices"
)

// Checks of an Arrow IPC file's structure, made before arrow-go reads it, so
// that every count and length arrow-go will allocate from is known to lie
// inside the file (see fbverify.go).
//
// File layout: "ARROW1\0\0", an IPC stream (ignored by file readers), the
// footer flatbuffer, its int32 length, "ARROW1". The footer lists blocks
// (offset, metadata length, body length); a block is a message prefix
// (0xFFFFFFFF, int32 length; or the pre-0.15 int32 length alone), a Message
// flatbuffer, then the body.

const (
	arrowMagic      = "ARROW1"
	ipcContinuation = 0xFFFFFFFF

	msgSchema          = 1 // MessageHeader union values
	msgDictionaryBatch = 2
	msgRecordBatch     = 3
)

// arrowBlock is one footer entry.
type arrowBlock struct {
	offset int64
	meta   int32
	body   int64
}

// arrowLayout is the checked footer of an Arrow IPC file.
type arrowLayout struct {
	batches, dicts []arrowBlock
	footerStart    int64
}

func le16(b []byte, p int) int   { return int(binary.LittleEndian.Uint16(b[p:])) }
func le32(b []byte, p int) int64 { return int64(int32(binary.LittleEndian.Uint32(b[p:]))) }
func le64(b []byte, p int) int64 { return int64(binary.LittleEndian.Uint64(b[p:])) }

// fbAt returns where field i of the verified table at pos is stored, or 0
// when it is absent.
func fbAt(b []byte, pos, i int) int {
	vt := pos - int(le32(b, pos))
	if 4+2*i+2 > le16(b, vt) {
		return 0
	}
	if fo := le16(b, vt+4+2*i); fo != 0 {
		return pos + fo
	}
	return 0
}

// fbRef follows the verified offset stored at p.
func fbRef(b []byte, p int) int { return p + int(binary.LittleEndian.Uint32(b[p:])) }

// fbVec returns the count and first element of the vector field i, if any.
func fbVec(b []byte, pos, i int) (n, start int) {
	p := fbAt(b, pos, i)
	if p == 0 {
		return 0, 0
	}
	v := fbRef(b, p)
	return int(binary.LittleEndian.Uint32(b[v:])), v + 4
}

// readAt reads n bytes at off; n has been checked against the file's size.
func readAt(r io.ReaderAt, off, n int64) ([]byte, error) {
	b := make([]byte, n)
	if _, err := r.ReadAt(b, off); err != nil {
		return nil, fmt.Errorf("reading %d bytes at %d: %w", n, off, err)
	}
	return b, nil
}

// checkArrowFile checks the magic numbers, the footer flatbuffer and every
// block's place in the file.
func checkArrowFile(r io.ReaderAt, size int64) (*arrowLayout, error) {
	const tail = 4 + len(arrowMagic)
	if size < 8+int64(tail)+8 {
		return nil, fmt.Errorf("%d bytes is too short for an Arrow IPC file", size)
	}
	head, err := readAt(r, 0, 8)
	if err != nil {
		return nil, err
	}
	end, err := readAt(r, size-int64(tail), int64(tail))
	if err != nil {
		return nil, err
	}
	if string(head[:6]) != arrowMagic || string(end[4:]) != arrowMagic {
		return nil, fmt.Errorf("not an Arrow IPC file (no ARROW1 magic at both ends)")
	}
	flen := int64(binary.LittleEndian.Uint32(end))
	footerStart := size - int64(tail) - flen
	if footerStart < 8 {
		return nil, fmt.Errorf("footer length %d does not fit in the %d-byte file", flen, size)
	}
	footer, err := readAt(r, footerStart, flen)
	if err != nil {
		return nil, err
	}
	if err := verifyFlatbuffer(footer, fbFooter); err != nil {
		return nil, fmt.Errorf("footer: %w", err)
	}
	root := fbRef(footer, 0)
	if fbAt(footer, root, 1) == 0 {
		return nil, fmt.Errorf("footer has no schema")
	}
	lay := &arrowLayout{footerStart: footerStart}
	for _, l := range []struct {
		dst   *[]arrowBlock
		field int
		what  string
	}{{&lay.dicts, 2, "dictionary"}, {&lay.batches, 3, "record batch"}} {
		n, start := fbVec(footer, root, l.field)
		*l.dst = make([]arrowBlock, n) // n*24 bytes are in the footer
		for i := range n {
			p := start + 24*i
			b := arrowBlock{offset: le64(footer, p), meta: int32(le32(footer, p+8)), body: le64(footer, p+16)}
			if b.offset < 8 || b.offset%8 != 0 || b.meta < 8 || b.meta%8 != 0 || b.body < 0 || b.body%8 != 0 ||
				b.offset > footerStart || int64(b.meta) > footerStart-b.offset || b.body > footerStart-b.offset-int64(b.meta) {
				return nil, fmt.Errorf("%s block %d (offset %d, metadata %d, body %d bytes) does not lie before the footer at %d",
					l.what, i, b.offset, b.meta, b.body, footerStart)
			}
			(*l.dst)[i] = b
		}
	}
	return lay, nil
}

// checkArrowStream walks the IPC stream between the file's leading magic and
// its footer, message by message, and checks that its record batches are the
// footer's blocks. Readers of the file format go by the footer alone, so a
// footer that lost blocks to damage would end the data early without a word
// (an Arrow file counts its rows nowhere else). A message header is read only
// after its length is checked to lie before the footer, and is verified
// before it is parsed.
func checkArrowStream(r io.ReaderAt, lay *arrowLayout) error {
	var seen []int64 // offsets of the stream's record batch messages
	off, end := int64(8), lay.footerStart
	for off < end {
		if end-off < 4 {
			return fmt.Errorf("stream: %d stray bytes at %d before the footer", end-off, off)
		}
		head, err := readAt(r, off, min(8, end-off))
		if err != nil {
			return err
		}
		prefix, n := int64(4), le32(head, 0)
		if binary.LittleEndian.Uint32(head) == ipcContinuation {
			if len(head) < 8 {
				return fmt.Errorf("stream: message at %d is cut off by the footer", off)
			}
			prefix, n = 8, le32(head, 4)
		}
		if n == 0 {
			break // the end-of-stream marker
		}
		if n < 0 || n > end-off-prefix {
			return fmt.Errorf("stream: message at %d claims %d bytes of metadata, more than lie before the footer", off, n)
		}
		fb, err := readAt(r, off+prefix, n)
		if err != nil {
			return err
		}
		if err := verifyFlatbuffer(fb, fbMessage); err != nil {
			return fmt.Errorf("stream: message at %d: %w", off, err)
		}
		root := fbRef(fb, 0)
		var body int64
		if p := fbAt(fb, root, 3); p != 0 {
			body = le64(fb, p)
		}
		if body < 0 || body > end-off-prefix-n {
			return fmt.Errorf("stream: message at %d claims a %d-byte body, more than lies before the footer", off, body)
		}
		if p := fbAt(fb, root, 1); p != 0 && fb[p] == msgRecordBatch {
			seen = append(seen, off)
		}
		off += prefix + n + body
	}
	listed := make([]int64, len(lay.batches))
	for i, b := range lay.batches {
		listed[i] = b.offset
	}
	slices.Sort(listed)
	if !slices.Equal(seen, listed) {
		return fmt.Errorf("the footer lists %d record batches, the stream before it holds %d (or others)", len(listed), len(seen))
	}
	return nil
}

// checkArrowMessage checks the message of block b (a record batch or, with
// want msgDictionaryBatch, a dictionary): its flatbuffer, its body length, and
// that every buffer lies in the body. Compressed buffers must not decompress
// to more than maxAlloc bytes each.
func checkArrowMessage(r io.ReaderAt, b arrowBlock, want int, maxAlloc int64) error {
	meta, err := readAt(r, b.offset, int64(b.meta))
	if err != nil {
		return err
	}
	prefix := 4
	if binary.LittleEndian.Uint32(meta) == ipcContinuation {
		prefix = 8
	}
	if n := int64(binary.LittleEndian.Uint32(meta[prefix-4:])); n != int64(len(meta)-prefix) {
		return fmt.Errorf("message length %d does not match its block's %d", n, len(meta)-prefix)
	}
	fb := meta[prefix:]
	if err := verifyFlatbuffer(fb, fbMessage); err != nil {
		return fmt.Errorf("message: %w", err)
	}
	root := fbRef(fb, 0)
	if p := fbAt(fb, root, 1); p == 0 || int(fb[p]) != want {
		return fmt.Errorf("block holds the wrong kind of message")
	}
	if p := fbAt(fb, root, 3); p == 0 && b.body != 0 || p != 0 && le64(fb, p) != b.body {
		return fmt.Errorf("message body length does not match its block's %d", b.body)
	}
	hp := fbAt(fb, root, 2)
	if hp == 0 {
		return fmt.Errorf("message has no header")
	}
	rb := fbRef(fb, hp)
	if want == msgDictionaryBatch {
		if p := fbAt(fb, rb, 1); p != 0 {
			rb = fbRef(fb, p)
		} else {
			return fmt.Errorf("dictionary batch has no data")
		}
	}
	return checkRecordBatch(r, fb, rb, b, maxAlloc)
}

func checkRecordBatch(r io.ReaderAt, fb []byte, rb int, b arrowBlock, maxAlloc int64) error {
	if p := fbAt(fb, rb, 0); p != 0 && le64(fb, p) < 0 {
		return fmt.Errorf("negative row count %d", le64(fb, p))
	}
	n, start := fbVec(fb, rb, 1)
	for i := range n {
		length, nulls := le64(fb, start+16*i), le64(fb, start+16*i+8)
		if length < 0 || nulls < 0 || nulls > length {
			return fmt.Errorf("field node %d has length %d and %d nulls", i, length, nulls)
		}
	}
	compressed := fbAt(fb, rb, 3) != 0
	nbuf, start := fbVec(fb, rb, 2)
	for i := range nbuf {
		off, length := le64(fb, start+16*i), le64(fb, start+16*i+8)
		if off < 0 || length < 0 || off > b.body || length > b.body-off {
			return fmt.Errorf("buffer %d (offset %d, %d bytes) lies outside the %d-byte body", i, off, length, b.body)
		}
		if !compressed || length == 0 {
			continue
		}
		if length < 8 {
			return fmt.Errorf("compressed buffer %d of %d bytes lacks its length", i, length)
		}
		raw, err := readAt(r, b.offset+int64(b.meta)+off, 8)
		if err != nil {
			return err
		}
		if u := le64(raw, 0); u < -1 || u > maxAlloc {
			return fmt.Errorf("compressed buffer %d claims %d bytes uncompressed: %w", i, u, ErrLimit)
		}
	}
	nv, start := fbVec(fb, rb, 4)
	var total int64
	for i := range nv {
		c := le64(fb, start+8*i)
		if c < 0 || c > int64(nbuf) {
			return fmt.Errorf("variadic buffer count %d exceeds the %d buffers", c, nbuf)
		}
		if total += c; total > int64(nbuf) {
			return fmt.Errorf("variadic buffer counts exceed the %d buffers", nbuf)
		}
	}
	return nil
}

// checkSchemaStream checks the IPC stream that holds the Arrow schema stored in
// a Parquet file's metadata (ARROW:schema): its first message must be a
// verified Schema whose lengths fit in the stream.
func checkSchemaStream(b []byte) error {
	if len(b) < 8 {
		return fmt.Errorf("stored Arrow schema of %d bytes is too short", len(b))
	}
	prefix := 4
	if binary.LittleEndian.Uint32(b) == ipcContinuation {
		prefix = 8
	}
	n := int64(binary.LittleEndian.Uint32(b[prefix-4:]))
	if n == 0 || n > int64(len(b)-prefix) {
		return fmt.Errorf("stored Arrow schema message of %d bytes does not fit in %d", n, len(b)-prefix)
	}
	fb := b[prefix : int64(prefix)+n]
	if err := verifyFlatbuffer(fb, fbMessage); err != nil {
		return fmt.Errorf("stored Arrow schema: %w", err)
	}
	root := fbRef(fb, 0)
	if p := fbAt(fb, root, 1); p == 0 || fb[p] != msgSchema {
		return fmt.Errorf("stored Arrow schema is not a schema message")
	}
	if p := fbAt(fb, root, 3); p != 0 {
		if body := le64(fb, p); body < 0 || body > int64(len(b)-prefix)-n {
			return fmt.Errorf("stored Arrow schema claims a %d-byte body", body)
		}
	}
	if fbAt(fb, root, 2) == 0 {
		return fmt.Errorf("stored Arrow schema message has no schema")
	}
	return nil
}
