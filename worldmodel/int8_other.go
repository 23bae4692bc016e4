//go:build !amd64 || purego

package worldmodel

var softmaxAVX512, requantAVX512 = false, false

func softmaxPAVX512(p []int16, sc []int32, e []uint32, m mult32) { softmaxPGo(p, sc, e, m) }

func (l *rqLinear) rowsAVX512(kind int, out8 []int8, x, acc []int32, rows int, table []int32) int {
	return 0
}

var lnKernel = false

func lnAVX512Rows[T int8 | int16](dst []T, x []int32, g []int64, b []int32, mu, inv, lim int64) int {
	return 0
}

var pvVNNI = false

func pvRow(out []int32, p []int16, vp []int16, K, hd int) { pvRowGo(out, p, vp, K, hd) }
