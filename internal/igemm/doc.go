// Package igemm holds memowm's integer matrix kernels for the int8 inference
// profile: int8 activations times int8 weights with int32 sums,
//
//	out[i*ldo+n] = sum over k < K of int32(a[i*lda+k]) * int32(w[k*N+n])
//
// MulRef is the plain loop; Pack repacks a weight matrix once and
// MulPackedTo multiplies by it with the fastest kernel the machine has
// (Kernel names it): AVX-512 VNNI, AVX2, or plain Go.
//
// # Invariants
//
//   - Exactness: every kernel returns MulRef's result bit for bit, for any
//     shape, strides and number of goroutines. Integer addition is exact and
//     associative, so the order of the sum does not matter; the kernels may
//     group, pair or reorder the products.
//   - No inner split across goroutines: goroutines split the output columns
//     (panels of 64), and the rows when there are fewer panels than
//     goroutines; each output element is summed by one goroutine. Small
//     products use fewer goroutines than asked (each gets a few
//     microseconds of work at least), which changes no result.
//   - Overflow bound: |product| <= 128*128, so |sum| <= K*16384, which fits
//     int32 for K <= MaxK = 131071 (at K = 131072, (-128)*(-128) summed would
//     reach 2^31). Pack, MulRef and MulPackedTo panic above MaxK: a weight
//     matrix that large is a programming error, not input.
//   - Wrapping: the VNNI kernel's intermediate sums may leave the int32 range
//     (see below); int32 addition wraps modulo 2^32, and since the true
//     result lies in the range, the wrapped result is it.
//
// # Kernels
//
// Pack stores the weights in panels of 64 columns; a panel is a run of
// groups of 4 consecutive inner indices, 256 bytes each, column j's four
// weights at bytes 4j..4j+3, zero-padded past K and N.
//
// avx512vnni (AVX-512 F, BW and VNNI): VPDPBUSD multiplies unsigned by
// signed bytes and adds each four products into an int32 lane. The
// activations are signed, so they are copied once per call offset by 128
// (a XOR 0x80, 0..255), and the result is corrected by -128 times each
// column's sum, which Pack stores and the kernel uses as the starting value:
// sum (a+128)w - 128 sum w = sum aw. The micro-kernel keeps 6 rows x 64
// columns in 24 zmm registers; the last 1 to 5 rows run a kernel of their
// count; a panel past N writes into a tile that is copied out.
//
// avx2: both operands are sign-extended to 16 bits (the activations once
// per call, the weights as they are loaded, VPMOVSXBW) and VPMADDWD adds
// pairs of products into int32, exactly; 4 rows x 8 columns per kernel.
// VPMADDUBSW is not used: it saturates its 16-bit pair sums.
//
// go: the same packed layout in plain Go. Two rows travel in one int64,
// a0 + a1<<32, so that one 64-bit multiply by a weight makes both products;
// the sum is L + H<<32 modulo 2^64 with L and H the two rows' sums, which
// int32(s) and int32((s-L)>>32) recover exactly. Blocks of 2 row pairs x 2
// columns. It is the only kernel with the build tag purego and on other
// architectures.
package igemm
