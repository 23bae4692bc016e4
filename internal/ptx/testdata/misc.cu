// Local arrays (stack depot), lookup tables in device and constant memory.
#include "prelude.h"

// Each thread insertion-sorts 16 values in a local array indexed dynamically.
GLOBAL void localsort(i32* out, const i32* in, int n) {
  int i = CTAID_X * NTID_X + TID_X;
  if (i >= n) return;
  i32 v[16];
  for (int k = 0; k < 16; k++) v[k] = in[16 * i + k];
  for (int k = 1; k < 16; k++) {
    i32 x = v[k];
    int j = k - 1;
    while (j >= 0 && v[j] > x) {
      v[j + 1] = v[j];
      j--;
    }
    v[j + 1] = x;
  }
  int pick = in[16 * i] & 15;
  for (int k = 0; k < 16; k++) out[17 * i + k] = v[k];
  out[17 * i + 16] = v[pick];
}

__device__ const u8 sbox[16] = {14, 4, 13, 1, 2, 15, 11, 8, 3, 10, 6, 12, 5, 9, 0, 7};
__constant__ u32 mix[8] = {0x9e3779b9u, 0x7f4a7c15u, 0x85ebca6bu, 0xc2b2ae35u, 0x27d4eb2fu, 0x165667b1u, 0xd3a2646cu, 0xfd7046c5u};
__device__ u32 counter;

// Substitutes every nibble through sbox and mixes with a constant table.
GLOBAL void lut(u32* out, const u32* in, int n) {
  int i = CTAID_X * NTID_X + TID_X;
  if (i >= n) return;
  u32 x = in[i], y = 0;
  for (int k = 0; k < 8; k++) y |= (u32)sbox[(x >> (4 * k)) & 15] << (4 * k);
  out[i] = y ^ mix[x & 7];
  __nvvm_atom_add_gen_i((int*)&counter, 1);
}
