"""Finds the `python3` on PATH and exposes its headers to the build.

The native module must be compiled against the headers of the interpreter
that will import it (tools/bootstrap.sh installs numpy and pytest for that
same interpreter), so nothing is hard-coded: the rule asks `python3` for
its include directory and extension suffix, links the headers into
@local_python//:include and writes them into @local_python//:defs.bzl for
the wheel's tags.
"""

_QUERY = """
import sys, sysconfig
print(sysconfig.get_paths()["include"])
print(sysconfig.get_config_var("EXT_SUFFIX") or ".so")
print("cp%d%d" % sys.version_info[:2])
print(sys.executable)
"""

def _local_python_impl(ctx):
    python = ctx.which("python3")
    if python == None:
        fail("python3 is not on PATH; run tools/bootstrap.sh")
    result = ctx.execute([python, "-c", _QUERY])
    if result.return_code != 0:
        fail("python3 could not report its configuration: " + result.stderr)
    include, ext_suffix, tag, executable = result.stdout.strip().split("\n")
    ctx.symlink(include, "include")
    ctx.file("BUILD", """
package(default_visibility = ["//visibility:public"])

cc_library(
    name = "python_headers",
    hdrs = glob(["include/**/*.h"]),
    includes = ["include"],
)
""")
    ctx.file("defs.bzl", "\n".join([
        "PYTHON_EXT_SUFFIX = %r" % ext_suffix,
        "PYTHON_TAG = %r" % tag,
        "PYTHON_EXECUTABLE = %r" % executable,
        "",
    ]))

local_python = repository_rule(
    implementation = _local_python_impl,
    environ = ["PATH", "PYENV_VERSION"],
    local = True,
)
