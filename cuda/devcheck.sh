#!/usr/bin/env bash
# cuda/devcheck.sh: every GPU check of the CUDA backend in one run, for a
# machine with one NVIDIA GPU (H100 or H200), its driver and no Go. It runs a
# memowm binary built beforehand on a machine with Go (stripped: about 52 MiB):
#
#   CGO_ENABLED=0 GOOS=linux GOARCH=amd64 go build -trimpath -ldflags='-s -w' -o cuda/bin/memowm ./cmd/memowm
#
# (no cgo: the binary links only the system's C library, through which it
# opens libcuda.so.1). Then, on the GPU machine, from the repository root:
#
#   cuda/devcheck.sh [OUTDIR]        (default: $OUT/devcheck, else cuda/devcheck-out)
#
# Each step writes OUTDIR/STEP.json (its --json output) and OUTDIR/STEP.log
# (stderr), and appends {"step", "rc", "seconds"} to OUTDIR/steps.jsonl as it
# ends. A deadline (DEVCHECK_SECONDS, 450 by default) bounds the whole run:
# each step's limit is cut to the time left, and steps past the deadline are
# recorded as skipped (rc -1), so the run ends within 8 minutes with the
# results so far. Needs bash, coreutils, awk and the driver; ptxas and
# nvidia-smi only if present. The steps, most important first:
#   info       the device, or why it does not open
#   ptxas-*    ptxas (when on PATH) compiles each module for sm_90
#   parity     'gpu check': random int8 models of every preset, CPU vs GPU, op by
#              op and every table, mode and entropy, with each GEMM kernel
#              (must be 0 mismatches)
#   bench-*    'gpu bench': int8 predictions obs/s per preset and batch size
#              (tensor cores, then dp4a; the big preset on the CPU beside them)
#   e2e-*      1,000 sim episodes of the tiny preset encoded on the GPU and on the
#              CPU (the files must be byte-identical), each verified and decoded
#              on the other device; the paper preset on 201 episodes, its GPU file
#              verified on the CPU
#   train-*    'fit --stage wm' with the blocks on the GPU: steps/s and GFLOP/s
#   encode-*   end-to-end encode obs/s on the GPU per preset and --batch
# It exits non-zero when a check fails or is skipped.
#
# A dry run without a GPU checks the script itself: the emulator stands in
# for the GPU and the sizes shrink:
#   DEVCHECK_DEVICE=emulator DEVCHECK_EPISODES=6 DEVCHECK_PRESETS=tiny DEVCHECK_BATCHES=1,2 \
#     DEVCHECK_TRAIN_STEPS=2 cuda/devcheck.sh /tmp/dry
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
deadline=$((began + ${DEVCHECK_SECONDS:-450}))

# step NAME LIMIT CMD...: runs CMD with a time limit (cut to the deadline),
# stdout to NAME.json, stderr to NAME.log.
step() {
  local name=$1 limit=$2; shift 2
  local left=$((deadline - $(date +%s)))
  if [ "$left" -lt 5 ]; then
    echo "{\"step\":\"$name\",\"rc\":-1,\"seconds\":0,\"skipped\":\"deadline\"}" >>"$out/steps.jsonl"
    echo "== $name: skipped (deadline)"
    failed=$((failed + 1))
    return 1
  fi
  [ "$limit" -gt "$left" ] && limit=$left
  local t0 t1 rc secs
  t0=$(date +%s.%N)
  timeout "$limit" "$@" >"$out/$name.json" 2>"$out/$name.log"
  rc=$?
  t1=$(date +%s.%N)
  secs=$(awk -v a="$t0" -v b="$t1" 'BEGIN{printf "%.2f", b-a}')
  echo "{\"step\":\"$name\",\"rc\":$rc,\"seconds\":$secs}" >>"$out/steps.jsonl"
  echo "== $name: rc $rc, $secs s"
  if [ "$rc" -ne 0 ]; then failed=$((failed + 1)); tail -5 "$out/$name.log"; fi
  return "$rc"
}

# SAME A B: the two files are byte-identical (cksum is coreutils').
SAME='[ "$(cksum <"$1")" = "$(cksum <"$2")" ]'

if [ ! -x "$M" ]; then
  echo "devcheck: $M is missing: build it first (see the top of this script)"; exit 2
fi
: >"$out/steps.jsonl"
"$M" version >"$out/version.txt" 2>&1
if command -v nvidia-smi >/dev/null 2>&1; then
  timeout 20 nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv >"$out/nvidia-smi.txt" 2>&1
fi
step info 30 "$M" gpu info --json
if command -v ptxas >/dev/null 2>&1; then
  for f in cuda/*.ptx; do
    step "ptxas-$(basename "$f" .ptx)" 60 ptxas -arch=sm_90 "$f" -o "$work/x.cubin"
  done
fi
step parity 150 "$M" gpu check --device "$DEV" --presets "$PRESETS" --histories 8 --json
for p in ${PRESETS//,/ }; do
  step "bench-$p" 60 "$M" gpu bench --device "$DEV" --preset "$p" --batch "$BATCHES" --time 2s --json
done
step "bench-$BIG-dp4a" 60 "$M" gpu bench --device "$DEV" --preset "$BIG" --gemm dp4a --batch "${BATCHES##*,}" --time 2s --json
step "bench-$BIG-cpu" 30 "$M" gpu bench --device cpu --preset "$BIG" --batch 16 --time 5s --json

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
  "$M" sim --model "$work/tiny.mwb" --out "$work/train.arrow" --episodes 64 --steps 20 --seed 4 --quiet || return 1
  for p in $E2E; do
    "$M" model int8 --model "$work/$p.mwb" --calib "$work/codes.arrow" --out "$work/$p-8.mwb" --histories 64 || return 1
  done
}
export -f setup
export M work E2E EPISODES
: >>"$out/setup.log"
t0=$(date +%s)
left=$((deadline - t0))
if [ "$left" -gt 5 ]; then
  timeout "$((left < 150 ? left : 150))" bash -c setup >>"$out/setup.log" 2>&1
  setup=$?
else
  setup=124
fi
echo "{\"step\":\"setup\",\"rc\":$setup,\"seconds\":$(($(date +%s) - t0))}" >>"$out/steps.jsonl"
echo "== setup: rc $setup, $(($(date +%s) - t0)) s"
if [ "$setup" -ne 0 ]; then
  echo "== setup failed"; tail -20 "$out/setup.log"; failed=$((failed + 1))
else
  # tiny: GPU and CPU files byte-identical, each read on the other.
  B="$work/tiny-8.mwb"
  step e2e-encode-gpu 120 "$M" encode --model "$B" --in "$work/codes.arrow" --out "$work/gpu.mwm" --lambda 0 --device "$DEV" --quiet --json
  step e2e-encode-cpu 120 "$M" encode --model "$B" --in "$work/codes.arrow" --out "$work/cpu.mwm" --lambda 0 --device cpu --quiet --json
  step e2e-identical 30 bash -c "$SAME" _ "$work/gpu.mwm" "$work/cpu.mwm"
  step e2e-verify-gpu-file-on-cpu 120 "$M" verify --model "$B" --device cpu --json "$work/gpu.mwm"
  step e2e-verify-cpu-file-on-gpu 120 "$M" verify --model "$B" --device "$DEV" --json "$work/cpu.mwm"
  step e2e-decode-on-cpu 120 "$M" decode --model "$B" --in "$work/gpu.mwm" --out "$work/dec-cpu.arrow" --device cpu --quiet --json
  step e2e-decode-on-gpu 120 "$M" decode --model "$B" --in "$work/cpu.mwm" --out "$work/dec-gpu.arrow" --device "$DEV" --quiet --json
  step e2e-decoded-identical 30 bash -c "$SAME" _ "$work/dec-cpu.arrow" "$work/dec-gpu.arrow"
  # the big preset, a fifth of the episodes: the GPU's file read on the CPU.
  P="$work/$BIG-8.mwb"
  step e2e-big-encode-gpu 120 "$M" encode --model "$P" --in "$work/codes200.arrow" --out "$work/big.mwm" --lambda 0 --device "$DEV" --quiet --json
  step e2e-big-verify-on-cpu 150 "$M" verify --model "$P" --device cpu --json "$work/big.mwm"
  # Training: steps of 16 histories with the blocks on the device (tiny
  # also on the CPU beside it); the JSON has steps_per_s and gflops.
  for p in $E2E; do
    step "train-$p" 120 "$M" fit --stage wm --in "$work/train.arrow" --opq "$work/q.opq" --out "$work/train-$p.mwb" --preset "$p" --steps "$TRAIN_STEPS" --batch 16 --device "$DEV" --quiet --json
  done
  step train-tiny-cpu 120 "$M" fit --stage wm --in "$work/train.arrow" --opq "$work/q.opq" --out "$work/train-cpu.mwb" --preset tiny --steps "$TRAIN_STEPS" --batch 16 --device cpu --quiet --json
  for p in $E2E; do
    for b in 8 64 256; do
      step "encode-$p-batch$b" 60 "$M" encode --model "$work/$p-8.mwb" --in "$work/codes.arrow" --out "$work/speed.mwm" --force --lambda 0 --device "$DEV" --batch "$b" --quiet --json
    done
  done
fi
echo "devcheck: $failed failed or skipped step(s), $(($(date +%s) - began)) s; results in $out"
[ "$failed" -eq 0 ]
