#!/usr/bin/env bash
# docs/GPU.md's checklist, run on a lent GPU machine from the repository root
# over a bundle made here by tools/gpu/bundle.sh (carried as
# .gpu_bundle.tar.xz, which it unpacks):
#   every GPU test binary (each must print its tests OK, not SKIPPED),
#   `sbp verify --device=cuda`, `sbp demo --device=cuda`, and the GPU
#   benchmarks. Logs go to $OUT (or ./gpu_out without the device tool).
# Usage: tools/gpu/checklist.sh [tests|sanitize|bench|all] [gtest filter]
set -uo pipefail
what=${1:-all}
filter=${2:-*}
out=${OUT:-gpu_out}
mkdir -p "$out"
b=$PWD/.gpu_bundle
if [ ! -d "$b" ] && [ -f "$b.tar.xz" ]; then xz -dc "$b.tar.xz" | tar -xf -; fi

# CUDA's libraries from the machine itself: the toolkit's, else the ones
# PyTorch's wheels bring (NCCL in particular).
libdirs=$b/lib
for d in /usr/local/cuda/lib64 /usr/local/cuda/targets/x86_64-linux/lib; do
  [ -d "$d" ] && libdirs=$libdirs:$d
done
for name in libnccl.so.2 libcublas.so.13 libcudart.so.13; do
  found=$(ldconfig -p | grep -q "$name" && echo sys)
  if [ -z "$found" ]; then
    f=$(find / -xdev -name "$name" -not -path '*/proc/*' 2>/dev/null | head -1)
    [ -n "$f" ] && libdirs=$libdirs:$(dirname "$f")
  fi
done
export NCCL_DEBUG=${NCCL_DEBUG:-WARN}
export LD_LIBRARY_PATH=$libdirs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}

{
  date -u
  nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.max.sm --format=csv
  echo "LD_LIBRARY_PATH=$LD_LIBRARY_PATH"
  ls -la /lib/x86_64-linux-gnu/libnccl* /usr/local/cuda/lib64/libnccl* 2>&1
  for t in "$b"/bin/*; do echo "== ldd $(basename "$t")"; ldd "$t" | grep -E "not found|nccl|cublas|cudart"; done
} >"$out/env.txt" 2>&1

if [ "$what" = tests ] || [ "$what" = all ]; then
  pids=()
  for t in cuda_kernels_test cuda_select_kernels_test cuda_int_elementwise_test \
           cuda_reduce_conv_kernels_test cuda_verify_test cuda_nccl_test cuda_boxing_test; do
    ( start=$SECONDS
      # NCCL says why a call failed only in its own log.
      nccl_debug=$NCCL_DEBUG
      [ "$t" = cuda_nccl_test ] && nccl_debug=INFO
      NCCL_DEBUG=$nccl_debug timeout -k 5 150 "$b/bin/$t" --gtest_filter="$filter" \
        >"$out/$t.log" 2>&1
      echo "rc=$? seconds=$((SECONDS - start))" >>"$out/$t.log" ) &
    pids+=($!)
  done
  wait "${pids[@]}"
  {
    echo "== sbp verify --device=cuda"
    timeout -k 5 90 "$b/bin/sbp" verify --device=cuda 2>&1 | tail -40
    echo "rc=${PIPESTATUS[0]}"
    echo "== sbp demo --device=cuda"
    timeout -k 5 90 "$b/bin/sbp" demo --device=cuda 2>&1 | tail -40
    echo "rc=${PIPESTATUS[0]}"
  } >"$out/tools.log" 2>&1
  # One file for all the test logs (the device tool returns at most 8
  # files), and a summary of each for the device tool's output.
  for f in "$out"/cuda_*.log; do
    echo "##### $(basename "$f" .log)"
    cat "$f"
  done >"$out/tests.log"
  for f in "$out"/cuda_*.log; do
    echo "### $(basename "$f" .log)"
    grep -E '^\[  FAILED  \]|^\[  PASSED  \]|^\[  SKIPPED \] [0-9]+ test|^rc=|SKIPPED: no' "$f" | sort -u | head -30
    rm -f "$f"
  done
  grep -E "^==|rc=" "$out/tools.log"
fi

if [ "$what" = sanitize ] || [ "$what" = all ]; then
  # compute-sanitizer names the kernel and address of an illegal access.
  cs=$(command -v compute-sanitizer || ls /usr/local/cuda/bin/compute-sanitizer 2>/dev/null)
  {
    echo "== memcheck: sbp demo --device=cuda --steps=2"
    timeout -k 5 120 "$cs" --tool memcheck --print-limit 20 "$b/bin/sbp" demo --device=cuda --steps=2 2>&1 | tail -80
    echo "== memcheck: cuda_boxing_test (rank threads)"
    timeout -k 5 60 "$cs" --tool memcheck --print-limit 20 "$b/bin/cuda_boxing_test" \
      --gtest_filter='RankThreadsOnOneGpu*' 2>&1 | tail -80
  } >"$out/sanitize.log" 2>&1
  grep -E "^==|ERROR SUMMARY|Invalid|FAILED  \]|PASSED  \]" "$out/sanitize.log" | head -40
fi

if [ "$what" = bench ] || [ "$what" = all ]; then
  timeout -k 5 120 "$b/bin/cuda_benchmark" --benchmark_min_time=0.2 \
    >"$out/bench.txt" 2>&1
  echo "bench rc=$?"
  tail -45 "$out/bench.txt"
fi
