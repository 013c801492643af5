#!/usr/bin/env bash
# Builds the GPU test binaries and tools with our own libraries linked in
# statically, and gathers them with the Debian shared libraries they need
# (Abseil, protobuf, Gloo, ...) into .gpu_bundle/, so that they run on a GPU
# machine whose image is not Debian's. CUDA's own libraries (cudart, cuBLAS,
# NCCL) are not copied: the GPU machine has them (tools/gpu/checklist.sh finds
# them there), and they are too large to carry.
set -euo pipefail
cd "$(dirname "$0")/../.."

targets=(
  //tests/kernels:cuda_kernels_test
  //tests/kernels:cuda_select_kernels_test
  //tests/kernels:cuda_int_elementwise_test
  //tests/kernels:cuda_reduce_conv_kernels_test
  //tests/kernels:cuda_verify_test
  //tests/runtime:cuda_nccl_test
  //tests/runtime:cuda_boxing_test
  //cli:sbp
  //tools/bench:cuda_benchmark
)
bazel build --config=cuda --dynamic_mode=off "${targets[@]}"

out=.gpu_bundle
rm -rf "$out"
mkdir -p "$out/bin" "$out/lib"
for t in "${targets[@]}"; do
  path=${t#//}
  path=bazel-bin/${path/://}
  cp "$path" "$out/bin/"
done
# The tool keeps its symbol table: compute-sanitizer's host backtraces
# name functions only with it.
for f in "$out"/bin/*; do
  [ "$(basename "$f")" = sbp ] || strip "$f" 2>/dev/null || true
done

# Every shared library the binaries name, except the C runtime, the CUDA
# driver and CUDA's own libraries.
for b in "$out"/bin/*; do
  ldd "$b" | awk '/=> \//{print $3}'
done | sort -u | while read -r lib; do
  case "$(basename "$lib")" in
    libc.so*|libm.so*|libpthread.so*|libdl.so*|librt.so*|ld-linux*|libgcc_s.so*|libstdc++.so*) ;;
    libcuda.so*|libcudart.so*|libcublas*|libnccl.so*|libnvidia*) ;;
    *) cp -L "$lib" "$out/lib/" ;;
  esac
done
# One solid archive: the binaries share most of their device code, which xz's
# 64 MiB window stores once (136 MB of binaries pack to about 6 MB), well
# inside what the device tool carries.
tar -cf - "$out" | xz -9 -T2 >"$out.tar.xz"
du -sh "$out" "$out.tar.xz"
