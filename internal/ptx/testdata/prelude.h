// Prelude for kernels compiled with clang-14 -nocudainc (no CUDA headers).
#define __device__ __attribute__((device))
#define __global__ __attribute__((global))
#define __shared__ __attribute__((shared))
#define __constant__ __attribute__((constant))
#define GLOBAL extern "C" __global__
#define TID_X __nvvm_read_ptx_sreg_tid_x()
#define TID_Y __nvvm_read_ptx_sreg_tid_y()
#define TID_Z __nvvm_read_ptx_sreg_tid_z()
#define NTID_X __nvvm_read_ptx_sreg_ntid_x()
#define NTID_Y __nvvm_read_ptx_sreg_ntid_y()
#define NTID_Z __nvvm_read_ptx_sreg_ntid_z()
#define CTAID_X __nvvm_read_ptx_sreg_ctaid_x()
#define CTAID_Y __nvvm_read_ptx_sreg_ctaid_y()
#define CTAID_Z __nvvm_read_ptx_sreg_ctaid_z()
#define NCTAID_X __nvvm_read_ptx_sreg_nctaid_x()
#define NCTAID_Y __nvvm_read_ptx_sreg_nctaid_y()
#define NCTAID_Z __nvvm_read_ptx_sreg_nctaid_z()
#define SYNC() __nvvm_bar_sync(0)
typedef signed char i8;
typedef unsigned char u8;
typedef short i16;
typedef unsigned short u16;
typedef int i32;
typedef unsigned u32;
typedef long long i64;
typedef unsigned long long u64;
