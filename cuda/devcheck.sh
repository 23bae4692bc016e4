#!/usr/bin/env bash
# cuda/devcheck.sh: every GPU check of the CUDA backend in one run, for a
# machine with one NVIDIA GPU (H100 or H200), its driver and no Go. It runs a
# memowm binary built beforehand on a machine with Go:
#
#   CGO_ENABLED=0 GOOS=linux GOARCH=amd64 go build -o cuda/bin/memowm ./cmd/memowm
#
# (no cgo: the binary links only the system's C library loader, through
# which it opens libcuda.so.1). Then, on the GPU machine, from the
# repository root:
#
#   cuda/devcheck.sh [OUTDIR]        (default: $OUT/devcheck, else cuda/devcheck-out)
#
# Each step writes OUTDIR/STEP.json (its --json output) and OUTDIR/STEP.log
# (stderr), and appends {"step", "rc", "seconds"} to OUTDIR/steps.jsonl. Every
# step has a time limit, so the whole run stays under 8 minutes. The steps:
#   info       the device, or why it does not open
#   ptxas      ptxas (when nvcc's tools are on PATH) compiles int8.ptx for the GPU
#   parity     'gpu check': random int8 models of every preset, CPU vs GPU, op by
#              op and every table, mode and entropy (must be 0 mismatches)
#   e2e-*      1,000 sim episodes: encoded on the GPU and on the CPU (the files
#              must be byte-identical), each verified and decoded on the other
#              device; the paper preset on 200 episodes
#   train-*    'fit --stage wm' with the blocks on the GPU: steps/s and GFLOP/s
#   bench      'gpu bench': int8 predictions obs/s per preset and batch size
#   encode-*   end-to-end encode obs/s on the GPU per preset and --batch
# It exits non-zero when a check fails.
#
# A dry run without a GPU checks the script itself: the emulator stands in
# for the GPU and the sizes shrink:
#   DEVCHECK_DEVICE=emulator DEVCHECK_EPISODES=6 DEVCHECK_PRESETS=tiny DEVCHECK_BATCHES=1,2 DEVCHECK_TRAIN_STEPS=2 cuda/devcheck.sh /tmp/dry
set -uo pipefail
cd "$(dirname "$0")/.."
M=${MEMOWM:-cuda/bin/memowm}
DEV=${DEVCHECK_DEVICE:-cuda}
EPISODES=${DEVCHECK_EPISODES:-1000}
PRESETS=${DEVCHECK_PRESETS:-tiny,small,base,paper}
BATCHES=${DEVCHECK_BATCHES:-1,8,64,256,512}
TRAIN_STEPS=${DEVCHECK_TRAIN_STEPS:-30}
BIG=paper # the preset of the large end-to-end and speed rows
if [ "$DEV" = emulator ]; then BIG=tiny; fi
out=${1:-${OUT:+$OUT/devcheck}}
out=${out:-cuda/devcheck-out}
mkdir -p "$out"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failed=0
began=$(date +%s)

# step NAME LIMIT CMD...: runs CMD with a time limit, stdout to NAME.json.
step() {
  local name=$1 limit=$2; shift 2
  local t0 t1 rc
  t0=$(date +%s.%N)
  timeout "$limit" "$@" >"$out/$name.json" 2>"$out/$name.log"
  rc=$?
  t1=$(date +%s.%N)
  local secs; secs=$(awk -v a="$t0" -v b="$t1" 'BEGIN{printf "%.2f", b-a}')
  echo "{\"step\":\"$name\",\"rc\":$rc,\"seconds\":$secs}" >>"$out/steps.jsonl"
  echo "== $name: rc $rc, $secs s"
  if [ "$rc" -ne 0 ]; then failed=$((failed + 1)); tail -5 "$out/$name.log"; fi
  return "$rc"
}

if [ ! -x "$M" ]; then
  echo "devcheck: $M is missing: build it first (see the top of this script)"; exit 2
fi
: >"$out/steps.jsonl"
"$M" version >"$out/version.txt" 2>&1
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv >"$out/nvidia-smi.txt" 2>&1
step info 30 "$M" gpu info --json
if command -v ptxas >/dev/null 2>&1; then
  for f in cuda/*.ptx; do
    step "ptxas-$(basename "$f" .ptx)" 60 ptxas -arch=sm_90 "$f" -o "$work/x.cubin"
  done
fi
step parity 150 "$M" gpu check --device "$DEV" --presets "$PRESETS" --histories 8 --json

# End to end: sim states for a quantizer, then codes of $EPISODES episodes.
E2E=$(printf '%s\n' tiny "$BIG" | sort -u)
setup() {
  "$M" sim --out "$work/fit.arrow" --episodes 40 --steps 16 --seed 1 --quiet || return 1
  "$M" fit opq --in "$work/fit.arrow" --out "$work/q.opq" --quiet --force || return 1
  for p in $E2E; do
    "$M" fit --opq "$work/q.opq" --out "$work/$p.mwb" --preset "$p" --quiet || return 1
  done
  "$M" sim --model "$work/tiny.mwb" --out "$work/codes.arrow" --episodes "$EPISODES" --steps 8 --seed 2 --quiet || return 1
  "$M" sim --model "$work/tiny.mwb" --out "$work/codes200.arrow" --episodes $((EPISODES / 5 + 1)) --steps 8 --seed 3 --quiet || return 1
  for p in $E2E; do
    "$M" model int8 --model "$work/$p.mwb" --calib "$work/codes.arrow" --out "$work/$p-8.mwb" --histories 64 || return 1
  done
}
setup >>"$out/setup.log" 2>&1
setup=$?
echo "{\"step\":\"setup\",\"rc\":$setup}" >>"$out/steps.jsonl"
if [ "$setup" -ne 0 ]; then
  echo "== setup failed"; tail -20 "$out/setup.log"; failed=$((failed + 1))
else
  # tiny, 1,000 episodes: GPU and CPU files byte-identical, each read on the other.
  B="$work/tiny-8.mwb"
  step e2e-encode-gpu 120 "$M" encode --model "$B" --in "$work/codes.arrow" --out "$work/gpu.mwm" --lambda 0 --device "$DEV" --quiet --json
  step e2e-encode-cpu 180 "$M" encode --model "$B" --in "$work/codes.arrow" --out "$work/cpu.mwm" --lambda 0 --device cpu --quiet --json
  step e2e-identical 10 cmp "$work/gpu.mwm" "$work/cpu.mwm"
  step e2e-verify-gpu-file-on-cpu 180 "$M" verify --model "$B" --device cpu --json "$work/gpu.mwm"
  step e2e-verify-cpu-file-on-gpu 120 "$M" verify --model "$B" --device "$DEV" --json "$work/cpu.mwm"
  step e2e-decode-on-cpu 180 "$M" decode --model "$B" --in "$work/gpu.mwm" --out "$work/dec-cpu.arrow" --device cpu --quiet --json
  step e2e-decode-on-gpu 120 "$M" decode --model "$B" --in "$work/cpu.mwm" --out "$work/dec-gpu.arrow" --device "$DEV" --quiet --json
  step e2e-decoded-identical 10 cmp "$work/dec-cpu.arrow" "$work/dec-gpu.arrow"
  # the big preset, a fifth of the episodes: the GPU's file read on the CPU.
  P="$work/$BIG-8.mwb"
  step e2e-big-encode-gpu 120 "$M" encode --model "$P" --in "$work/codes200.arrow" --out "$work/big.mwm" --lambda 0 --device "$DEV" --quiet --json
  step e2e-big-verify-on-cpu 150 "$M" verify --model "$P" --device cpu --json "$work/big.mwm"
  for p in $E2E; do
    for b in 8 64 256; do
      step "encode-$p-batch$b" 90 "$M" encode --model "$work/$p-8.mwb" --in "$work/codes.arrow" --out "$work/speed.mwm" --force --lambda 0 --device "$DEV" --batch "$b" --quiet --json
    done
  done
fi
# Training: steps of 16 histories with the blocks on the device (and, for
# tiny, on the CPU beside it); the JSON has steps_per_s and gflops.
if [ "$setup" -eq 0 ]; then
  "$M" sim --model "$work/tiny.mwb" --out "$work/train.arrow" --episodes 64 --steps 20 --seed 4 --quiet >>"$out/setup.log" 2>&1
  for p in $E2E; do
    step "train-$p" 150 "$M" fit --stage wm --in "$work/train.arrow" --opq "$work/q.opq" --out "$work/train-$p.mwb" --preset "$p" --steps "$TRAIN_STEPS" --batch 16 --device "$DEV" --quiet --json
  done
  step train-tiny-cpu 150 "$M" fit --stage wm --in "$work/train.arrow" --opq "$work/q.opq" --out "$work/train-cpu.mwb" --preset tiny --steps "$TRAIN_STEPS" --batch 16 --device cpu --quiet --json
fi
for p in ${PRESETS//,/ }; do
  step "bench-$p" 90 "$M" gpu bench --device "$DEV" --preset "$p" --batch "$BATCHES" --time 2s --json
done
step "bench-$BIG-dp4a" 90 "$M" gpu bench --device "$DEV" --preset "$BIG" --gemm dp4a --batch "${BATCHES##*,}" --time 2s --json
step "bench-$BIG-cpu" 60 "$M" gpu bench --device cpu --preset "$BIG" --batch 16 --time 5s --json
echo "devcheck: $failed failed step(s), $(( $(date +%s) - began )) s; results in $out"
[ "$failed" -eq 0 ]
