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
            ] + nvcc_flags),
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
