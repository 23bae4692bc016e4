package fgemm

// Register blocks of the micro-kernels: mr (or mr8) rows by nr columns of
// c.
const (
	mr  = 14
	mr8 = 8
	nr  = 32
)

// kernelGo is the micro-kernel as a plain loop, the fallback where there is
// no assembly kernel: it sets (load false) or continues (load true) the
// rows x nr block at c (row stride ldc; rows is mr or mr8) with the product
// of the packed panels a (kc steps of rows floats) and b (kc steps of nr
// floats), the steps in order. Each block element is one running sum; the
// compiler may fuse its multiply and add on some architectures.
func kernelGo(kc, rows int, a, b, c []float32, ldc int, load bool) {
	var acc [mr * nr]float32
	if load {
		for i := 0; i < rows; i++ {
			copy(acc[i*nr:(i+1)*nr], c[i*ldc:i*ldc+nr])
		}
	}
	a, b = a[:kc*rows], b[:kc*nr]
	for p := 0; p < kc; p++ {
		ap, bp := a[p*rows:p*rows+rows], b[p*nr:p*nr+nr]
		for i, av := range ap {
			row := acc[i*nr : i*nr+nr]
			for j, bv := range bp {
				row[j] += av * bv
			}
		}
	}
	for i := 0; i < rows; i++ {
		copy(c[i*ldc:i*ldc+nr], acc[i*nr:(i+1)*nr])
	}
}
