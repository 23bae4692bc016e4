// Kernels that fault, for the error-path tests.
#include "prelude.h"

// Writes out[i] for i < n; launched with n past the allocation.
GLOBAL void oob(i32* out, int n) {
  int i = CTAID_X * NTID_X + TID_X;
  if (i < n) out[i] = i;
}

// Threads >= k return before the barrier the others wait at.
GLOBAL void earlyexit(i32* out, u32 k) {
  if (TID_X >= k) return;
  out[TID_X] = 1;
  SYNC();
  out[TID_X] += out[(TID_X + 1) % k];
}

// Odd and even threads wait at different barriers.
GLOBAL void divbar(i32* out) {
  if (TID_X & 1) {
    out[TID_X] = 1;
    SYNC();
    out[TID_X] += out[TID_X ^ 1];
  } else {
    out[TID_X] = 2;
    SYNC();
    out[TID_X] *= out[TID_X ^ 1];
  }
}

// Integer division; faults where b[i] == 0.
GLOBAL void divide(i32* out, const i32* a, const i32* b, int n) {
  int i = CTAID_X * NTID_X + TID_X;
  if (i < n) out[i] = a[i] / b[i];
}

// A 4-byte store at a byte offset.
GLOBAL void misaligned(u8* p, int off) { *(volatile i32*)(p + off) = 1; }

// Spins until *flag is nonzero.
GLOBAL void spin(volatile i32* flag) {
  while (*flag == 0) {
  }
}
