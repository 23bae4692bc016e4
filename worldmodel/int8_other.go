//go:build !amd64 || purego

package worldmodel

var softmaxAVX512, requantAVX512 = false, false

func softmaxDigitsAVX512(p1, p0 []int8, sc []int32, e []uint32, m mult32) {
	softmaxDigitsGo(p1, p0, sc, e, m)
}

func (l *rqLinear) rowsAVX512(kind int, out8 []int8, x, acc []int32, rows int, table []int32) int {
	return 0
}

var lnAVX512 = false

func lnAVX512To8(dst []int8, x []int32, g []int64, b []int32, mu, inv, lim int64) int { return 0 }

func lnAVX512To16(dst []int16, x []int32, g []int64, b []int32, mu, inv, lim int64) int {
	return 0
}
