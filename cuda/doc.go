// Package cuda is memowm's GPU backend: the world model's int8 profile
// (worldmodel.ProfileInt8) on NVIDIA GPUs through the CUDA driver API, with
// no cgo and no CUDA toolkit at build time.
//
// # How it binds the GPU
//
// The driver (libcuda.so.1) is opened at run time with
// github.com/ebitengine/purego (driver_purego.go, linux/amd64 and
// linux/arm64; -tags nocuda leaves it out). The kernels are CUDA C
// (kernels/int8.cu) compiled to PTX by clang (gen.sh: --cuda-device-only
// -nocudainc, target sm_61), committed as int8.ptx, embedded, and loaded
// with cuModuleLoadDataEx, which JIT-compiles them for the GPU at hand.
// TestPTXUpToDate checks that gen.sh regenerates the committed text.
// gorgonia.org/cu is not used: it needs cgo and cuda.h to build and exits
// the process from its init when no GPU is present.
//
// # What runs on the GPU
//
//   - Int8: the int8 profile's predictor (kernels/int8.cu, and
//     kernels/int8_tc.cu's tensor-core product on GPUs of compute
//     capability 8.0 and later), bit-exact with the CPU.
//   - Blocks: the Transformer blocks of f32 training steps
//     (kernels/train.cu), a worldmodel.BlockEngine: forward and backward
//     on the device, the rest of the step (embeddings, heads, loss,
//     optimizer) and the weights on the CPU, so checkpoints are the CPU's.
//     Not bit-exact (training is not an inference profile): its parity test
//     states the tolerance.
//
// # Invariants
//
//   - Nothing here runs at init: without a driver, a device or a recent
//     enough one, Open returns an error wrapping ErrUnavailable that says
//     why, and callers run on the CPU.
//   - Int8 gives the Predictions of worldmodel.Int8CPU bit for bit: every
//     kernel names the Go function whose integers it computes, all sums are
//     integers (exact in any order), and nothing before the tables is a
//     float except the input tokens, which the CPU computes (f32 profile)
//     and uploads. CompareInt8 checks it op by op and for the whole
//     predictor; the tests run it on the emulator, 'memowm gpu check' (and
//     cuda/devcheck.sh) on a GPU.
//   - The emulator (OpenEmulator, internal/ptx) runs the same embedded PTX
//     with the same launches on the CPU, so CI checks the GPU path's
//     integers without a GPU. What it cannot check is the hardware: the JIT,
//     timing, memory limits.
//   - A Device is used by one goroutine at a time; the GPU binding pins each
//     call to an OS thread and makes its context current there.
package cuda
