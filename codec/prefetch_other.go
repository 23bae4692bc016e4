//go:build !amd64

package codec

// prefetch does nothing where no prefetch instruction is bound.
func prefetch(p *byte) {}
