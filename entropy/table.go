package entropy

// Integer helpers on frequency tables. A table is a []uint32 of frequencies,
// one per symbol; its cumulative form cum has one more entry: cum[0] = 0 and
// cum[s+1] = cum[s] + freq[s], so symbol s owns [cum[s], cum[s+1]).

// CumulativeTo writes the cumulative form of freq into dst (resliced to
// len(freq)+1, reallocated if its capacity is short) and returns it. The sum
// must fit in a uint32 (every table of this package does).
func CumulativeTo(dst, freq []uint32) []uint32 {
	n := len(freq) + 1
	if cap(dst) < n {
		dst = make([]uint32, n)
	}
	dst = dst[:n]
	var c uint32
	dst[0] = 0
	for i, f := range freq {
		c += f
		dst[i+1] = c
	}
	return dst
}

// Lookup returns the symbol s whose slice [cum[s], cum[s+1]) holds t: the
// largest s in [0, len(cum)-2] with cum[s] <= t (0 if there is none). cum must
// be non-decreasing for the answer to mean anything, but any input gives an
// index in range, never a panic, as long as len(cum) >= 2. It is a binary
// search: about log2(n) steps.
func Lookup(cum []uint32, t uint32) int {
	// Branch-free binary search (the compiler emits a conditional move):
	// the answer stays in [base, base+n).
	base, n := 0, len(cum)-1
	for n > 1 {
		half := n >> 1
		if cum[base+half] <= t {
			base += half
		}
		n -= half
	}
	return base
}

// Mode returns the index of the largest frequency, the lowest such index on
// ties, and -1 for an empty table. This is the modal prediction z^ of the
// design (argmax, lowest c on ties).
func Mode(freq []uint32) int {
	best := -1
	var bf uint32
	for i, f := range freq {
		if best < 0 || f > bf {
			best, bf = i, f
		}
	}
	return best
}
