package cuda

import "unsafe"

// Host slices as the bytes a device copy moves. Devices and the hosts this
// package builds for (amd64, arm64) are little endian, so an element's
// bytes are its device representation.

func bytesOf[T any](s []T) []byte {
	if len(s) == 0 {
		return nil
	}
	var z T
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(s))), len(s)*int(unsafe.Sizeof(z)))
}

// upload allocates a device copy of s.
func upload[T any](d Device, s []T) (Ptr, error) {
	b := bytesOf(s)
	p, err := d.Alloc(len(b))
	if err != nil {
		return 0, err
	}
	if err := d.Write(p, b); err != nil {
		d.Free(p)
		return 0, err
	}
	return p, nil
}

// buffer is a device allocation that grows on demand.
type buffer struct {
	p Ptr
	n int
}

// ensure makes b at least n bytes (its contents are lost when it grows).
func (b *buffer) ensure(d Device, n int) error {
	if n <= b.n {
		return nil
	}
	if b.p != 0 {
		d.Free(b.p)
		b.p, b.n = 0, 0
	}
	n = max(n, 256)
	p, err := d.Alloc(n)
	if err != nil {
		return err
	}
	b.p, b.n = p, n
	return nil
}

func (b *buffer) free(d Device) {
	if b.p != 0 {
		d.Free(b.p)
		b.p, b.n = 0, 0
	}
}

// resize is b with length n, reallocated only when its capacity is short
// (the contents are then lost).
func resize[T any](b []T, n int) []T {
	if cap(b) < n {
		return make([]T, n)
	}
	return b[:n]
}
