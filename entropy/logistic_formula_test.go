package entropy

// squashFormula is the definition squashTab was generated from.
func squashFormula(st int32) uint16 {
	v := 65536/(1+Exp(-float64(st)/256)) + 0.5
	p := int64(v)
	if p < 1 {
		p = 1
	}
	if p > 65535 {
		p = 65535
	}
	return uint16(p)
}
