package codec

// prefetch hints that the cache line at p will be read soon (PREFETCHT0):
// it changes no state a program can see, and never faults.
//
//go:noescape
func prefetch(p *byte)
