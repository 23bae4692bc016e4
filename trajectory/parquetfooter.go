package trajectory

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// A Parquet footer is a Thrift FileMetaData struct in the compact protocol.
// Thrift readers skip a field whose type is not the one they expect, so one
// flipped bit in a field header can make arrow-go drop the rest of the
// footer without a word: the key-value metadata (memowm's checksums and
// stored Arrow schema), the created_by. The file then reads as another
// tool's file, unchecked. checkParquetFooter walks the footer's bytes and
// requires FileMetaData's top-level fields to have their types, its
// required fields to be there, and the struct to end where the footer ends.
// The walk reads no more than the footer and allocates nothing.

// Compact protocol types.
const (
	ctBoolTrue = 1 + iota
	ctBoolFalse
	ctByte
	ctI16
	ctI32
	ctI64
	ctDouble
	ctBinary
	ctList
	ctSet
	ctMap
	ctStruct
	ctUUID
)

// fileMetaDataTypes are FileMetaData's fields (parquet.thrift) and their
// compact types; fields 1 to 4 are required.
var fileMetaDataTypes = map[int]byte{
	1: ctI32,    // version
	2: ctList,   // schema
	3: ctI64,    // num_rows
	4: ctList,   // row_groups
	5: ctList,   // key_value_metadata
	6: ctBinary, // created_by
	7: ctList,   // column_orders
	8: ctStruct, // encryption_algorithm
	9: ctBinary, // footer_signing_key_metadata
}

// checkParquetFooter checks the footer of the size-byte Parquet file in r.
func checkParquetFooter(r io.ReaderAt, size int64) error {
	if size < 12 {
		return fmt.Errorf("%d bytes is too short for a Parquet file", size)
	}
	tail, err := readAt(r, size-8, 8)
	if err != nil {
		return err
	}
	if string(tail[4:]) != "PAR1" {
		return nil // an encrypted footer ("PARE"): arrow-go's to judge
	}
	n := int64(binary.LittleEndian.Uint32(tail))
	if n > size-12 {
		return fmt.Errorf("footer length %d does not fit in the %d-byte file", n, size)
	}
	b, err := readAt(r, size-8-n, n)
	if err != nil {
		return err
	}
	w := thriftWalker{b: b}
	seen := map[int]bool{}
	id := 0
	for {
		typ, fid, err := w.fieldHeader(id)
		if err != nil {
			return fmt.Errorf("footer: %w", err)
		}
		if typ == 0 {
			break
		}
		id = fid
		if want, ok := fileMetaDataTypes[id]; ok && !sameCompactType(typ, want) {
			return fmt.Errorf("footer: field %d of FileMetaData has compact type %d, not %d (the footer is damaged)", id, typ, want)
		}
		seen[id] = true
		if err := w.skip(typ, 0); err != nil {
			return fmt.Errorf("footer: field %d: %w", id, err)
		}
	}
	for id := 1; id <= 4; id++ {
		if !seen[id] {
			return fmt.Errorf("footer: FileMetaData lacks its required field %d (the footer is damaged)", id)
		}
	}
	if w.p != len(b) {
		return fmt.Errorf("footer: FileMetaData ends after %d of the footer's %d bytes (the footer is damaged)", w.p, len(b))
	}
	return nil
}

func sameCompactType(got, want byte) bool {
	if want == ctBoolTrue || want == ctBoolFalse {
		return got == ctBoolTrue || got == ctBoolFalse
	}
	return got == want
}

// thriftWalker steps over compact-protocol values in b.
type thriftWalker struct {
	b []byte
	p int
}

var errThriftShort = errors.New("a value runs past the end")

func (w *thriftWalker) byte() (byte, error) {
	if w.p >= len(w.b) {
		return 0, errThriftShort
	}
	w.p++
	return w.b[w.p-1], nil
}

func (w *thriftWalker) varint() (uint64, error) {
	var v uint64
	for shift := 0; shift < 64; shift += 7 {
		c, err := w.byte()
		if err != nil {
			return 0, err
		}
		v |= uint64(c&0x7f) << shift
		if c < 0x80 {
			return v, nil
		}
	}
	return 0, fmt.Errorf("a varint longer than 10 bytes")
}

func (w *thriftWalker) advance(n uint64) error {
	if n > uint64(len(w.b)-w.p) {
		return errThriftShort
	}
	w.p += int(n)
	return nil
}

// fieldHeader reads a field header after field prev: its type (0 for the
// struct's end) and id.
func (w *thriftWalker) fieldHeader(prev int) (typ byte, id int, err error) {
	c, err := w.byte()
	if err != nil || c == 0 {
		return 0, 0, err
	}
	typ, delta := c&0x0f, int(c>>4)
	if delta != 0 {
		return typ, prev + delta, nil
	}
	v, err := w.varint()
	if err != nil {
		return 0, 0, err
	}
	return typ, int(int16(v>>1) ^ -int16(v&1)), nil
}

// skip steps over one value of compact type typ, a field's or an element's.
func (w *thriftWalker) skip(typ byte, depth int) error {
	if depth > 64 {
		return fmt.Errorf("values nested deeper than 64")
	}
	switch typ {
	case ctBoolTrue, ctBoolFalse:
		return nil // in a field header; list elements are read by skipElem
	case ctByte:
		return w.advance(1)
	case ctI16, ctI32, ctI64:
		_, err := w.varint()
		return err
	case ctDouble:
		return w.advance(8)
	case ctUUID:
		return w.advance(16)
	case ctBinary:
		n, err := w.varint()
		if err != nil {
			return err
		}
		return w.advance(n)
	case ctList, ctSet:
		c, err := w.byte()
		if err != nil {
			return err
		}
		n, elem := uint64(c>>4), c&0x0f
		if n == 15 {
			if n, err = w.varint(); err != nil {
				return err
			}
		}
		for ; n > 0; n-- { // every element takes a byte or more: bounded by b
			if err := w.skipElem(elem, depth+1); err != nil {
				return err
			}
		}
		return nil
	case ctMap:
		n, err := w.varint()
		if err != nil || n == 0 {
			return err
		}
		kv, err := w.byte()
		if err != nil {
			return err
		}
		for ; n > 0; n-- {
			if err := w.skipElem(kv>>4, depth+1); err != nil {
				return err
			}
			if err := w.skipElem(kv&0x0f, depth+1); err != nil {
				return err
			}
		}
		return nil
	case ctStruct:
		id := 0
		for {
			t, fid, err := w.fieldHeader(id)
			if err != nil || t == 0 {
				return err
			}
			id = fid
			if err := w.skip(t, depth+1); err != nil {
				return err
			}
		}
	}
	return fmt.Errorf("unknown compact type %d", typ)
}

// skipElem steps over a list, set or map element: a bool is a byte there.
func (w *thriftWalker) skipElem(typ byte, depth int) error {
	if typ == ctBoolTrue || typ == ctBoolFalse {
		return w.advance(1)
	}
	if typ == 0 {
		return fmt.Errorf("an element of type 0")
	}
	return w.skip(typ, depth)
}
