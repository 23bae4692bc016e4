package trajectory

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// A flatbuffer verifier for the Arrow IPC metadata (Footer, Schema, Message),
// run on bytes read from a file before arrow-go parses them. arrow-go trusts
// every vector length it finds and allocates from it (a flipped bit in a
// field count asked for hundreds of gigabytes); after verification every
// table, vtable, string and vector lies inside the buffer, so every length
// arrow-go can read is bounded by the buffer's size.
//
// Layout reminders: a table starts with an int32 back-offset to its vtable;
// a vtable is uint16 vtable size, uint16 table size, then one uint16 offset
// (0: absent) per field. Strings and vectors are a uint32 count followed by
// their elements; offsets to them are uint32, relative to where they are
// stored.

// fbMaxDepth bounds how deeply tables nest (arrow-go allows 64 levels of
// nested types; a Field is two tables deep per level).
const fbMaxDepth = 160

type fbKind uint8

const (
	fbScalar    fbKind = iota + 1 // size bytes inline
	fbString                      // offset to a string
	fbTable                       // offset to table sub
	fbVecScalar                   // offset to a vector of size-byte scalars or structs
	fbVecTable                    // offset to a vector of offsets to tables sub
	fbUnion                       // offset to a table chosen by the byte field before it
)

type fbField struct {
	kind  fbKind
	size  int
	sub   *fbSpec
	union []*fbSpec // by the union's type byte; nil entries are verified as empty tables
}

// fbSpec lists a table's fields in declaration order.
type fbSpec struct {
	name   string
	fields []fbField
}

func sc(n int) fbField                    { return fbField{kind: fbScalar, size: n} }
func vec(n int) fbField                   { return fbField{kind: fbVecScalar, size: n} }
func tab(s *fbSpec) fbField               { return fbField{kind: fbTable, sub: s} }
func vtab(s *fbSpec) fbField              { return fbField{kind: fbVecTable, sub: s} }
func union(u ...*fbSpec) fbField          { return fbField{kind: fbUnion, union: u} }
func spec(n string, f ...fbField) *fbSpec { return &fbSpec{name: n, fields: f} }

var str = fbField{kind: fbString}

// The Arrow format's tables (format/Schema.fbs, Message.fbs, File.fbs).
var (
	fbEmpty     = spec("empty")
	fbKeyValue  = spec("KeyValue", str, str)
	fbInt       = spec("Int", sc(4), sc(1))
	fbDictEnc   = spec("DictionaryEncoding", sc(8), tab(fbInt), sc(1), sc(2))
	fbTypeUnion = union(
		nil,                          // NONE
		fbEmpty,                      // Null
		fbInt,                        // Int
		spec("FloatingPoint", sc(2)), // FloatingPoint
		fbEmpty, fbEmpty, fbEmpty,    // Binary, Utf8, Bool
		spec("Decimal", sc(4), sc(4), sc(4)),
		spec("Date", sc(2)),
		spec("Time", sc(2), sc(4)),
		spec("Timestamp", sc(2), str),
		spec("Interval", sc(2)),
		fbEmpty, fbEmpty, // List, Struct_
		spec("Union", sc(2), vec(4)),
		spec("FixedSizeBinary", sc(4)),
		spec("FixedSizeList", sc(4)),
		spec("Map", sc(1)),
		spec("Duration", sc(2)),
		fbEmpty, fbEmpty, fbEmpty, fbEmpty, // LargeBinary, LargeUtf8, LargeList, RunEndEncoded
		fbEmpty, fbEmpty, fbEmpty, fbEmpty, // BinaryView, Utf8View, ListView, LargeListView
	)
	fbFieldSpec = spec("Field", str, sc(1), sc(1), fbTypeUnion, tab(fbDictEnc), fbField{}, vtab(fbKeyValue))
	fbSchema    = spec("Schema", sc(2), vtab(fbFieldSpec), vtab(fbKeyValue), vec(8))
	fbFooter    = spec("Footer", sc(2), tab(fbSchema), vec(24), vec(24), vtab(fbKeyValue))

	fbRecordBatch = spec("RecordBatch", sc(8), vec(16), vec(16), tab(spec("BodyCompression", sc(1), sc(1))), vec(8))
	fbDictBatch   = spec("DictionaryBatch", sc(8), tab(fbRecordBatch), sc(1))
	fbMessage     = spec("Message", sc(2), sc(1), union(nil, fbSchema, fbDictBatch, fbRecordBatch), sc(8), vtab(fbKeyValue))
)

func init() { fbFieldSpec.fields[5] = vtab(fbFieldSpec) } // children: [Field]

// fbVerifier checks one buffer. budget bounds the tables visited, so that
// shared subtables cannot make verification (or arrow-go's walk) exponential.
type fbVerifier struct {
	buf    []byte
	budget int
}

var errFB = errors.New("flatbuffer")

func (v *fbVerifier) fail(format string, args ...any) error {
	return fmt.Errorf("%w: %s", errFB, fmt.Sprintf(format, args...))
}

// verifyFlatbuffer checks that buf is a flatbuffer whose root table is s.
func verifyFlatbuffer(buf []byte, s *fbSpec) error {
	v := &fbVerifier{buf: buf, budget: len(buf)/4 + 8}
	if len(buf) < 8 {
		return v.fail("%s: %d bytes is too short", s.name, len(buf))
	}
	root, err := v.offset(0)
	if err != nil {
		return err
	}
	return v.table(root, s, 0)
}

// u32 reads at p, which must leave 4 bytes in the buffer.
func (v *fbVerifier) u32(p int) (uint32, bool) {
	if p < 0 || p > len(v.buf)-4 {
		return 0, false
	}
	return binary.LittleEndian.Uint32(v.buf[p:]), true
}

// offset follows the uint32 offset stored at p.
func (v *fbVerifier) offset(p int) (int, error) {
	o, ok := v.u32(p)
	if !ok || int64(p)+int64(o) > int64(len(v.buf)) || o == 0 {
		return 0, v.fail("offset at %d (%d) points outside the %d-byte buffer", p, o, len(v.buf))
	}
	return p + int(o), nil
}

// vector returns the element count and the start of the vector at p,
// checking that n elements of size bytes fit.
func (v *fbVerifier) vector(p, size int) (int, int, error) {
	n, ok := v.u32(p)
	if !ok || int64(n)*int64(size) > int64(len(v.buf)-p-4) {
		return 0, 0, v.fail("vector at %d of %d elements of %d bytes does not fit in %d bytes", p, n, size, len(v.buf))
	}
	return int(n), p + 4, nil
}

func (v *fbVerifier) table(pos int, s *fbSpec, depth int) error {
	if depth > fbMaxDepth {
		return v.fail("tables nest more than %d deep", fbMaxDepth)
	}
	if v.budget--; v.budget < 0 {
		return v.fail("more tables than the buffer can hold")
	}
	so, ok := v.u32(pos)
	if !ok {
		return v.fail("%s table at %d outside the buffer", s.name, pos)
	}
	vt := int64(pos) - int64(int32(so))
	if vt < 0 || vt > int64(len(v.buf)-4) {
		return v.fail("%s vtable at %d outside the buffer", s.name, vt)
	}
	vsize := int(binary.LittleEndian.Uint16(v.buf[vt:]))
	tsize := int(binary.LittleEndian.Uint16(v.buf[vt+2:]))
	if vsize < 4 || vsize%2 != 0 || int(vt)+vsize > len(v.buf) || tsize < 4 || pos+tsize > len(v.buf) {
		return v.fail("%s vtable at %d (size %d, table size %d) does not fit", s.name, vt, vsize, tsize)
	}
	unionType := -1
	for i, f := range s.fields {
		if 4+2*i+2 > vsize {
			break
		}
		fo := int(binary.LittleEndian.Uint16(v.buf[int(vt)+4+2*i:]))
		if fo == 0 {
			unionType = -1
			continue
		}
		size := f.size
		if f.kind != fbScalar {
			size = 4
		}
		if fo+size > tsize {
			return v.fail("%s field %d at %d+%d overruns its table of %d bytes", s.name, i, fo, size, tsize)
		}
		p := pos + fo
		if err := v.field(p, f, unionType, depth); err != nil {
			return err
		}
		unionType = -1
		if f.kind == fbScalar && f.size == 1 {
			unionType = int(v.buf[p])
		}
	}
	return nil
}

func (v *fbVerifier) field(p int, f fbField, unionType, depth int) error {
	if f.kind == fbScalar {
		return nil
	}
	to, err := v.offset(p)
	if err != nil {
		return err
	}
	switch f.kind {
	case fbString:
		n, _, err := v.vector(to, 1)
		if err == nil && to+4+n >= len(v.buf) {
			err = v.fail("string at %d lacks its terminator", to)
		}
		return err
	case fbTable:
		return v.table(to, f.sub, depth+1)
	case fbVecScalar:
		_, _, err := v.vector(to, f.size)
		return err
	case fbVecTable:
		n, start, err := v.vector(to, 4)
		if err != nil {
			return err
		}
		for i := 0; i < n; i++ {
			t, err := v.offset(start + 4*i)
			if err != nil {
				return err
			}
			if err := v.table(t, f.sub, depth+1); err != nil {
				return err
			}
		}
		return nil
	case fbUnion:
		sub := fbEmpty
		if unionType >= 0 && unionType < len(f.union) && f.union[unionType] != nil {
			sub = f.union[unionType]
		}
		return v.table(to, sub, depth+1)
	}
	return v.fail("bad spec")
}
