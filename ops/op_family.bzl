"""op_family(): an op family whose records define their ops.

One TOML file of records (ops/records/README.md, "A family that defines its
ops") and the bodies its records name (kernels, and shape functions or
backward rules where the record does not derive them) become one library
per layer: generate.py writes each layer's registration from the records
(the rule into the op registry, the kernels into the kernel registry, the
backward rule into eager's table), and linking a layer's library registers
its piece. `<name>_rules` links without kernels or autograd, as the rules
layer must (`sbp infer` links no kernels); `<name>` is all three.
"""

_LAYER_DEPS = {
    "rules": ["//oneflow_sbp/rule_api:op_registry", "//ops:einsum_rule"],
    "kernels": ["//kernels:kernel_registry"],
    "backward": ["//eager"],
}

def op_family(name, record, rules = {}, kernels = {}, backward = {}, **kwargs):
    """The libraries `name_rules`, `name_kernels`, `name_backward` and `name`.

    Args:
      name: the family's libraries; `<name>_family.h` includes every layer's
        header of registration functions (`<name>_rules_registration.h`, ...).
      record: the family's TOML file.
      rules: {"srcs", "hdrs", "deps"} of the bodies its rules name (the
        header its `impl.rules` names, shape functions, SBP rules).
      kernels: the same for its kernels.
      backward: the same for its backward rules.
      **kwargs: passed to every cc_library (testonly, visibility).
    """
    layers = {"rules": rules, "kernels": kernels, "backward": backward}
    outs = [name + "_family.h"]
    for layer in layers:
        outs += [name + "_" + layer + "_registration.h", name + "_" + layer + "_registration.cc"]
    native.genrule(
        name = name + "_registration",
        srcs = [record],
        outs = outs,
        cmd = "python3 $(location //ops:records/generate.py) --family $(RULEDIR)/%s --include %s/%s $(SRCS)" % (
            name,
            native.package_name(),
            name,
        ),
        tools = ["//ops:records/generate.py"],
        testonly = kwargs.get("testonly", False),
    )
    for layer, body in layers.items():
        native.cc_library(
            name = name + "_" + layer,
            srcs = body.get("srcs", []) + [name + "_" + layer + "_registration.cc"],
            hdrs = body.get("hdrs", []) + [name + "_" + layer + "_registration.h"],
            local_defines = select({
                "//:cuda_enabled": ["OFS_WITH_CUDA=1"],
                "//conditions:default": [],
            }) if layer == "kernels" else [],
            deps = depset(body.get("deps", []) + _LAYER_DEPS[layer] + [
                "//oneflow_sbp/values:check",
                "//oneflow_sbp/values:status_macros",
                "//third_party:absl",
            ]).to_list(),
            alwayslink = True,
            **kwargs
        )
    native.cc_library(
        name = name,
        hdrs = [name + "_family.h"],
        deps = [":" + name + "_" + layer for layer in layers],
        **kwargs
    )
