package trajectory

import (
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

// Observation columns as other tools write them. memowm writes
// fixed_size_list<float32> (states) and fixed_size_list<uint8> (codes);
// DuckDB's COPY ... TO 'x.parquet' and pandas through pyarrow write
// list<float32> (or large_list, its element named "element" or "item"), and
// pandas integers as int64. Such columns are read row by row: each row must be
// non-null, hold exactly the file's width of non-null values, and (float64)
// hold values that are exactly float32s or (integers) codes in 0..255. Each
// violation is a *ValidationError naming the episode and step of the row.

// rowValues returns where row i's values lie in the observation column's
// values, after checking the row and its values for nulls.
func rowValues(obs array.ListLike, i int, id int64, step int) (start, end int64, err error) {
	if obs.IsNull(i) {
		return 0, 0, invalid(id, step, "observation is null")
	}
	start, end = obs.ValueOffsets(i)
	vals := obs.ListValues()
	if start < 0 || end < start || end > int64(vals.Len()) {
		return 0, 0, fmt.Errorf("trajectory: %w: episode %d step %d: the observation's values %d..%d lie outside the column's %d", ErrFormat, id, step, start, end, vals.Len())
	}
	if vals.NullN() > 0 {
		for j := start; j < end; j++ {
			if vals.IsNull(int(j)) {
				return 0, 0, invalid(id, step, "observation value %d of %d is null", j-start, end-start)
			}
		}
	}
	return start, end, nil
}

// stateRow returns the state in vals[start:end] as float32: the column's own
// values, or for a float64 column their conversion into buf (grown as
// needed), every value exactly a float32.
func stateRow(vals arrow.Array, start, end int64, buf *[]float32, id int64, step int) ([]float32, error) {
	switch v := vals.(type) {
	case *array.Float32:
		return v.Float32Values()[start:end], nil
	case *array.Float64:
		src := v.Float64Values()[start:end]
		if cap(*buf) < len(src) {
			*buf = make([]float32, len(src))
		}
		dst := (*buf)[:len(src)]
		for j, x := range src {
			dst[j] = float32(x)
			if float64(dst[j]) != x && x == x { // NaN is reported by validState
				return nil, invalid(id, step, "state value %d is %v, which float32 does not hold exactly (the column is float64: cast it to float32)", j, x)
			}
		}
		return dst, nil
	}
	return nil, fmt.Errorf("trajectory: %w: state values of type %v", ErrFormat, vals.DataType())
}

// codesRow returns the codes in vals[start:end] as uint8: the column's own
// values, or for another integer column their conversion into buf, every
// value in 0..255.
func codesRow(vals arrow.Array, start, end int64, buf *[]uint8, id int64, step int) ([]uint8, error) {
	if v, ok := vals.(*array.Uint8); ok {
		return v.Uint8Values()[start:end], nil
	}
	n := int(end - start)
	if cap(*buf) < n {
		*buf = make([]uint8, n)
	}
	dst := (*buf)[:n]
	var bad int
	var val string
	switch v := vals.(type) {
	case *array.Int8:
		bad, val = narrow(dst, v.Int8Values()[start:end])
	case *array.Int16:
		bad, val = narrow(dst, v.Int16Values()[start:end])
	case *array.Int32:
		bad, val = narrow(dst, v.Int32Values()[start:end])
	case *array.Int64:
		bad, val = narrow(dst, v.Int64Values()[start:end])
	case *array.Uint16:
		bad, val = narrow(dst, v.Uint16Values()[start:end])
	case *array.Uint32:
		bad, val = narrow(dst, v.Uint32Values()[start:end])
	case *array.Uint64:
		bad, val = narrow(dst, v.Uint64Values()[start:end])
	default:
		return nil, fmt.Errorf("trajectory: %w: code values of type %v", ErrFormat, vals.DataType())
	}
	if bad >= 0 {
		return nil, invalid(id, step, "code %d is %s, outside 0..255 (the column is %v)", bad, val, vals.DataType())
	}
	return dst, nil
}

// narrow copies src into dst and returns -1, or the index and value of the
// first value outside 0..255.
func narrow[T int8 | int16 | int32 | int64 | uint16 | uint32 | uint64](dst []uint8, src []T) (int, string) {
	for j, x := range src {
		// A uint64 above the int64 range converts to a negative int64.
		if int64(x) < 0 || int64(x) > 255 {
			return j, fmt.Sprint(x)
		}
		dst[j] = uint8(x)
	}
	return -1, ""
}

// firstWidth returns the number of values in the first non-null row of the
// observation column of rec, and that row's episode and step; ok is false
// when every row is null (addRow then reports the first).
func firstWidth(rec arrow.RecordBatch, c columns) (width int, id int64, step int, ok bool) {
	obs := rec.Column(c.obs).(array.ListLike)
	ep, st := rec.Column(c.episode).(*array.Int64), rec.Column(c.step).(*array.Int32)
	for i := 0; i < obs.Len(); i++ {
		if obs.IsValid(i) {
			s, e := obs.ValueOffsets(i)
			return int(e - s), ep.Value(i), int(st.Value(i)), true
		}
	}
	return 0, 0, 0, false
}
