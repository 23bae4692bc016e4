// prelude.h: what CUDA's headers would give the kernels, for clang's
// --cuda-device-only -nocudainc (no CUDA toolkit at build time).
#pragma once

#define __device__ __attribute__((device))
#define __global__ __attribute__((global))
#define __shared__ __attribute__((shared))

#define GLOBAL extern "C" __global__
#define DEV static __device__ inline __attribute__((always_inline))

#define TID (int)__nvvm_read_ptx_sreg_tid_x()
#define NTID (int)__nvvm_read_ptx_sreg_ntid_x()
#define BID_X (int)__nvvm_read_ptx_sreg_ctaid_x()
#define BID_Y (int)__nvvm_read_ptx_sreg_ctaid_y()
#define SYNC() __nvvm_bar_sync(0)

typedef signed char i8;
typedef unsigned char u8;
typedef short i16;
typedef int i32;
typedef unsigned int u32;
typedef long long i64;
typedef unsigned long long u64;

// dp4a: c + the dot product of a's and b's four signed bytes.
DEV i32 dp4a(i32 a, i32 b, i32 c) {
  i32 d;
  asm("dp4a.s32.s32 %0, %1, %2, %3;" : "=r"(d) : "r"(a), "r"(b), "r"(c));
  return d;
}

DEV u64 mulhi64(u64 a, u64 b) { return __nvvm_mulhi_ull(a, b); }
DEV int clz32(u32 x) { return __builtin_clz(x); }
DEV int clz64(u64 x) { return __builtin_clzll(x); }
DEV int ctz64(u64 x) { return __builtin_ctzll(x); }
