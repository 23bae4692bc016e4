package trajectory

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
)

// Column names of the trajectory schema, one row per observation.
const (
	ColEpisode = "episode"     // int64, not null: episode id
	ColStep    = "step"        // int32, not null: t, 0..T
	ColState   = "state"       // fixed_size_list<float32>[Slots*Dim], not null (Content States); read also as list/large_list, float64 (listWidth)
	ColCodes   = "codes"       // fixed_size_list<uint8>[Codes], not null (Content Codes); read also as list/large_list, other integers (listWidth)
	ColAction  = "action_type" // uint8, null on step 0: u_{t-1}'s kind
	ColX       = "pos_x"       // float32, null when the action has no position
	ColY       = "pos_y"       // float32, null when the action has no position
	ColDX      = "dx"          // float32, null when the action has no displacement
	ColDY      = "dy"          // float32, null when the action has no displacement
	ColPayload = "payload"     // binary (0..40 bytes), null on step 0
	ColFacts   = "facts"       // utf8 JSON ground truth, null when unknown
)

// Schema metadata keys.
const (
	metaFormat  = "memowm.format"
	metaVersion = "memowm.version"
	metaContent = "memowm.content"
	metaSlots   = "memowm.slots"
	metaDim     = "memowm.dim"
	metaCodes   = "memowm.codes"
	metaActions = "memowm.action_types"
	metaQuant   = "memowm.quantizer"

	formatName    = "memowm-trajectory"
	formatVersion = "1"
)

// Schema returns the Arrow schema of a trajectory file with meta m. The same
// schema is stored in Parquet files. The Writer adds one metadata key,
// memowm.checksum, saying the file carries episode checksums (checksum.go).
func Schema(m Meta) *arrow.Schema {
	obs := arrow.Field{Name: ColState, Type: arrow.FixedSizeListOfNonNullable(int32(m.Shape.StateLen()), arrow.PrimitiveTypes.Float32)}
	if m.Content == Codes {
		obs = arrow.Field{Name: ColCodes, Type: arrow.FixedSizeListOfNonNullable(int32(m.Shape.Codes), arrow.PrimitiveTypes.Uint8)}
	}
	keys := []string{metaFormat, metaVersion, metaContent, metaSlots, metaDim, metaCodes, metaActions}
	vals := []string{formatName, formatVersion, m.Content.String(),
		strconv.Itoa(m.Shape.Slots), strconv.Itoa(m.Shape.Dim), strconv.Itoa(m.Shape.Codes),
		strings.Join(ActionTypeNames(), ",")}
	if m.Quantizer != "" {
		keys, vals = append(keys, metaQuant), append(vals, m.Quantizer)
	}
	md := arrow.NewMetadata(keys, vals)
	return arrow.NewSchema([]arrow.Field{
		{Name: ColEpisode, Type: arrow.PrimitiveTypes.Int64},
		{Name: ColStep, Type: arrow.PrimitiveTypes.Int32},
		obs,
		{Name: ColAction, Type: arrow.PrimitiveTypes.Uint8, Nullable: true},
		{Name: ColX, Type: arrow.PrimitiveTypes.Float32, Nullable: true},
		{Name: ColY, Type: arrow.PrimitiveTypes.Float32, Nullable: true},
		{Name: ColDX, Type: arrow.PrimitiveTypes.Float32, Nullable: true},
		{Name: ColDY, Type: arrow.PrimitiveTypes.Float32, Nullable: true},
		{Name: ColPayload, Type: arrow.BinaryTypes.Binary, Nullable: true},
		{Name: ColFacts, Type: arrow.BinaryTypes.String, Nullable: true},
	}, &md)
}

// columns are the positions of the schema's fields in a file being read.
type columns struct {
	episode, step, obs, action, x, y, dx, dy, payload, facts int

	peek bool // the observation column is a list and nothing else gives its width: the first row does
}

// metaFromSchema recovers a file's Meta from its schema and checks that every
// column has the type Schema gives it, the observation column also as a list
// (listWidth). Files written by other tools are accepted when their columns
// are right, even without memowm metadata: the shape then comes from the
// observation column's width with the default slot count, and for a list
// column without a fixed width from its first row (columns.peek).
func metaFromSchema(s *arrow.Schema) (Meta, columns, error) {
	var m Meta
	var c columns
	find := func(name string, want arrow.DataType) (int, error) {
		idx := s.FieldIndices(name)
		if len(idx) != 1 {
			return -1, fmt.Errorf("trajectory: %w: column %q is missing", ErrFormat, name)
		}
		if got := s.Field(idx[0]).Type; !arrow.TypeEqual(got, want) {
			return -1, fmt.Errorf("trajectory: %w: column %q has type %v, want %v", ErrFormat, name, got, want)
		}
		return idx[0], nil
	}
	var err error
	for _, f := range []struct {
		dst  *int
		name string
		typ  arrow.DataType
	}{
		{&c.episode, ColEpisode, arrow.PrimitiveTypes.Int64},
		{&c.step, ColStep, arrow.PrimitiveTypes.Int32},
		{&c.action, ColAction, arrow.PrimitiveTypes.Uint8},
		{&c.x, ColX, arrow.PrimitiveTypes.Float32},
		{&c.y, ColY, arrow.PrimitiveTypes.Float32},
		{&c.dx, ColDX, arrow.PrimitiveTypes.Float32},
		{&c.dy, ColDY, arrow.PrimitiveTypes.Float32},
		{&c.payload, ColPayload, arrow.BinaryTypes.Binary},
	} {
		if *f.dst, err = find(f.name, f.typ); err != nil {
			return m, c, err
		}
	}
	c.facts = -1
	if idx := s.FieldIndices(ColFacts); len(idx) == 1 {
		if c.facts, err = find(ColFacts, arrow.BinaryTypes.String); err != nil {
			return m, c, err
		}
	}

	md := s.Metadata()
	if v, ok := md.GetValue(metaFormat); ok && v != formatName {
		return m, c, fmt.Errorf("trajectory: %w: format %q, want %q", ErrFormat, v, formatName)
	}
	if v, ok := md.GetValue(metaVersion); ok && v != formatVersion {
		return m, c, fmt.Errorf("trajectory: %w: format version %q is not supported (this build reads %s)", ErrFormat, v, formatVersion)
	}
	m.Shape = DefaultShape
	for _, kv := range []struct {
		key string
		dst *int
	}{{metaSlots, &m.Shape.Slots}, {metaDim, &m.Shape.Dim}, {metaCodes, &m.Shape.Codes}} {
		if v, ok := md.GetValue(kv.key); ok {
			n, err := strconv.Atoi(v)
			if err != nil {
				return m, c, fmt.Errorf("trajectory: %w: metadata %s=%q is not a number", ErrFormat, kv.key, v)
			}
			*kv.dst = n
		}
	}

	hasState, hasCodes := len(s.FieldIndices(ColState)) == 1, len(s.FieldIndices(ColCodes)) == 1
	name := ColState
	switch {
	case hasState && hasCodes:
		return m, c, fmt.Errorf("trajectory: %w: both %q and %q columns present", ErrFormat, ColState, ColCodes)
	case hasState:
		m.Content = States
	case hasCodes:
		m.Content, name = Codes, ColCodes
	default:
		return m, c, fmt.Errorf("trajectory: %w: neither a %q nor a %q column", ErrFormat, ColState, ColCodes)
	}
	c.obs = s.FieldIndices(name)[0]
	width, err := listWidth(s.Field(c.obs), m.Content)
	if err != nil {
		return m, c, err
	}
	_, hasWidth := md.GetValue(metaDim)
	if m.Content == Codes {
		_, hasWidth = md.GetValue(metaCodes)
	}
	switch {
	case width > 0:
		if err := fitWidth(&m, md, width); err != nil {
			return m, c, err
		}
	case !hasWidth:
		// A list column from another tool, without memowm metadata: its
		// first row gives the width (NewReader), every row is checked.
		c.peek = true
	}
	m.Quantizer, _ = md.GetValue(metaQuant)
	if err := m.Validate(); err != nil {
		return m, c, fmt.Errorf("%w (%w)", err, ErrFormat)
	}
	return m, c, nil
}

// fitWidth completes m's shape from the observation width where the
// metadata leaves it open (the default slot count for states), and checks
// that the width is the shape's.
func fitWidth(m *Meta, md arrow.Metadata, width int) error {
	if m.Content == Codes {
		if _, ok := md.GetValue(metaCodes); !ok {
			m.Shape.Codes = width
		}
		if width != m.Shape.Codes {
			return fmt.Errorf("trajectory: %w: codes column width %d does not match shape %v", ErrFormat, width, m.Shape)
		}
		return nil
	}
	if _, ok := md.GetValue(metaDim); !ok && width%m.Shape.Slots == 0 {
		m.Shape.Dim = width / m.Shape.Slots
	}
	if width != m.Shape.StateLen() {
		return fmt.Errorf("trajectory: %w: state column width %d does not match shape %v (want %d)", ErrFormat, width, m.Shape, m.Shape.StateLen())
	}
	return nil
}

// listWidth checks the observation column's type and returns the width a
// fixed_size_list fixes, or 0 for a list or large_list, whose rows are
// checked one by one (DuckDB and pandas/pyarrow write those). States are
// float32, or float64 when every value is exactly a float32; codes are
// uint8, or any integer type when every value lies in 0..255.
func listWidth(f arrow.Field, content Content) (int, error) {
	var elem arrow.DataType
	width := 0
	switch t := f.Type.(type) {
	case *arrow.FixedSizeListType:
		elem, width = t.Elem(), int(t.Len())
	case *arrow.ListType:
		elem = t.Elem()
	case *arrow.LargeListType:
		elem = t.Elem()
	}
	ok := false
	if elem != nil {
		switch elem.ID() {
		case arrow.FLOAT32, arrow.FLOAT64:
			ok = content == States
		case arrow.UINT8, arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64, arrow.UINT16, arrow.UINT32, arrow.UINT64:
			ok = content == Codes
		}
	}
	if !ok {
		want := "float32 (float64 when every value is exactly a float32)"
		if content == Codes {
			want = "uint8 (or integers in 0..255)"
		}
		return 0, fmt.Errorf("trajectory: %w: column %q has type %v, want a fixed_size_list, list or large_list of %s", ErrFormat, f.Name, f.Type, want)
	}
	if _, fixed := f.Type.(*arrow.FixedSizeListType); fixed && width <= 0 {
		return 0, fmt.Errorf("trajectory: %w: column %q has type %v, a list of width %d", ErrFormat, f.Name, f.Type, width)
	}
	return width, nil
}
