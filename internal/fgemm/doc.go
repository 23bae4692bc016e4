// Package fgemm holds the training's fast float32 kernels: a blocked,
// multi-goroutine matrix product with fused multiply-adds (MulTo) and the
// elementwise and row kernels around it (GELU backward, column softmax and its
// backward, row exponentials for the loss, LayerNorm and its backward, bias,
// residual and column sums, a fused weight-row gradient and dot product).
// It is for training only and is not exact: results depend on the
// machine and the build (AVX-512 assembly or plain Go) and differ from
// internal/f32's fixed-order kernels, which inference and the codec use and
// which this package must never replace.
//
// # Overview
//
// MulTo computes c = op(a) op(b) or c += op(a) op(b), where op is the
// identity or the transpose (Flags), so that a layer's backward reads its
// transposed operands in place instead of materialising them. On amd64 with
// AVX-512 the micro-kernel keeps a 14 x 32 block of c in 28 zmm registers and
// adds one fused multiply-add per inner step; op(b) is packed into panels of
// 32 columns (256 inner steps x 512 columns at a time, about L2); op(a) is
// read in place, 14 of a's rows or (a stored transposed) 14 of its columns
// at a time, and packed only for the last rows when fewer than 14 are left.
// Goroutines split c into row or column ranges of whole blocks. The plain Go
// kernel (build tag purego, other architectures, machines without AVX-512)
// runs the same blocking.
//
// # Invariants
//
//   - Every element of c is one running sum over the inner index in
//     increasing order, cut at fixed multiples of 256 (stored and reloaded
//     between cuts); its value therefore does not depend on the number of
//     goroutines, on which block or edge it falls in, or on the row and
//     column split. A training step that splits only outputs stays
//     bit-identical across thread counts on one machine and build.
//   - Edge blocks (fewer than 14 rows or 32 columns) run through a staging
//     tile; nothing outside the m x n block of c is read or written.
//   - Packing buffers live in a Workspace: MulTo allocates nothing.
//
// # Aliasing
//
// c must not overlap a or b. a and b may overlap each other.
package fgemm
