#!/usr/bin/env bash
# gen.sh: regenerates the committed PTX from the kernels' CUDA C with clang
# (no CUDA toolkit: --cuda-device-only -nocudainc -nocudalib). The target is
# sm_61 (dp4a), which every GPU since Pascal JIT-compiles, unless a source's
# first line says "// arch: sm_XX" (tensor cores). -ffp-contract=on makes
# LLVM mark float operations .rn, so ptxas fuses no multiply and add that
# the emulator would round twice. TestPTXUpToDate checks that this gives the
# committed text byte for byte.
#   cuda/gen.sh            rewrite cuda/NAME.ptx for every kernels/NAME.cu
#   cuda/gen.sh OUTDIR     write to OUTDIR instead (the test's check)
set -euo pipefail
cd "$(dirname "$0")"
out=${1:-.}
CLANG=${CLANG:-clang-14}
for src in kernels/*.cu; do
  k=$(basename "$src" .cu)
  # A first line "// arch: sm_XX" picks a newer target (tensor cores).
  arch=$(sed -n '1s|^// arch: \(sm_[0-9]*\)$|\1|p' "$src")
  "$CLANG" --cuda-device-only -nocudainc -nocudalib --cuda-gpu-arch="${arch:-sm_61}" -O3 -ffp-contract=on -S \
    -o "$out/$k.ptx" "$src"
done
