"""CUDA objects compiled by nvcc from /usr/local/cuda, linked by cc_library.

Only built under `--config=cuda`. Without it the targets are incompatible
(see //:cuda_config_missing) and `bazel build //...` skips them, so the
default build never needs a CUDA toolkit.
"""

NVCC = "/usr/local/cuda/bin/nvcc"

CUDA_ONLY = select({
    "//:cuda_enabled": [],
    "//conditions:default": ["//:cuda_config_missing"],
})

# Machine code for the GPUs we target: sm_80 (A100) and sm_90 (H100,
# H200), plus compute_90 PTX that newer GPUs compile at load time. Without
# -gencode nvcc 13 builds only sm_75, which an H100 would run through the
# driver's JIT at first launch (slow start, and bf16 arithmetic emulated in
# float instead of the sm_80+ instructions).
CUDA_ARCH_FLAGS = [
    "-gencode=arch=compute_80,code=sm_80",
    "'-gencode=arch=compute_90,code=[sm_90,compute_90]'",
]

def cuda_library(name, srcs, hdrs = [], deps = [], nvcc_flags = []):
    """A cc_library whose .cu sources are compiled by nvcc into objects.

    srcs: .cu files; each may include hdrs (workspace-relative paths).
    """
    objs = []
    for src in srcs:
        obj = name + "_" + src.replace("/", "_")[:-len(".cu")] + ".o"
        native.genrule(
            name = obj + "_nvcc",
            srcs = [src] + hdrs,
            outs = [obj],
            cmd = " ".join([
                NVCC,
                "-std=c++17",
                "-O2",
                "-I.",
                "-Xcompiler -fPIC",
                "-c $(location %s)" % src,
                "-o $@",
            ] + CUDA_ARCH_FLAGS + nvcc_flags),
            target_compatible_with = CUDA_ONLY,
            message = "nvcc " + src,
        )
        objs.append(":" + obj)
    native.cc_library(
        name = name,
        srcs = objs,
        hdrs = hdrs,
        deps = deps + ["//third_party:cuda_runtime"],
        includes = [],
        target_compatible_with = CUDA_ONLY,
        linkstatic = True,
    )
