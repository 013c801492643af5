"""sbp_fuzz_target: one libFuzzer target plus its gcc corpus replay test."""

def sbp_fuzz_target(name, srcs, deps = []):
    """Defines :<name>_lib, :<name> and :<name>_replay_test.

    <name> is the libFuzzer binary. It links -fsanitize=fuzzer, which only
    clang knows, so it is tagged manual: build it with
    `bazel build --config=fuzz //fuzz:<name>` (tools/fuzz.sh does).
    <name>_replay_test links the same entry function with replay_main.cc and
    feeds it corpus/<name>/ once: a cheap regression test under gcc in the
    normal suite.
    """
    native.cc_library(
        name = name + "_lib",
        testonly = True,
        srcs = srcs,
        deps = deps + [
            "//fuzz:fuzz_check",
            "//fuzz:fuzz_input",
        ],
        alwayslink = True,
    )
    native.cc_binary(
        name = name,
        testonly = True,
        linkopts = ["-fsanitize=fuzzer"],
        tags = ["manual"],
        deps = [":" + name + "_lib"],
    )
    native.cc_test(
        name = name + "_replay_test",
        srcs = ["replay_main.cc"],
        args = ["fuzz/corpus/" + name],
        data = native.glob(["corpus/" + name + "/**"]),
        deps = [":" + name + "_lib"],
    )
