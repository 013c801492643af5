"""op_family(): an op family whose records define their ops.

One TOML file of records (ops/records/README.md, "A family that defines its
ops") and the bodies its records name (kernels, and shape functions or
backward rules where the record does not derive them) become one library:
generate.py writes the registration of each layer (the rule into the op
registry, the kernels into the kernel registry, the backward rule into
eager's table) from the records, and linking the library registers them.
"""

def op_family(name, record, srcs = [], hdrs = [], deps = [], **kwargs):
    """The library `name` of the ops that `record` defines.

    Args:
      name: the library; `<name>_family.h` declares its registration functions.
      record: the family's TOML file.
      srcs: the bodies the records name (kernels, rules, backward rules).
      hdrs: the header its records' `impl` names.
      deps: what srcs need.
      **kwargs: passed to cc_library (testonly, visibility).
    """
    outs = [name + suffix for suffix in ["_family.h", "_rules.cc", "_kernels.cc", "_backward.cc"]]
    native.genrule(
        name = name + "_registration",
        srcs = [record],
        outs = outs,
        cmd = "python3 $(location //ops:records/generate.py) --family $(RULEDIR)/%s $(SRCS)" % name,
        tools = ["//ops:records/generate.py"],
        testonly = kwargs.get("testonly", False),
    )
    native.cc_library(
        name = name,
        srcs = srcs + outs[1:],
        hdrs = hdrs + outs[:1],
        local_defines = select({
            "//:cuda_enabled": ["OFS_WITH_CUDA=1"],
            "//conditions:default": [],
        }),
        deps = depset(deps + [
            "//eager",
            "//oneflow_sbp:check",
            "//oneflow_sbp:op_registry",
            "//oneflow_sbp:status_macros",
            "//ops:einsum_rule",
            "//ops/kernels:kernel_registry",
            "//third_party:absl",
        ]).to_list(),
        alwayslink = True,
        **kwargs
    )
