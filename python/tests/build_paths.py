"""Where this build's files are: under `bazel test` the runfiles tree
(TEST_SRCDIR/TEST_WORKSPACE), in a developer's checkout the environment
($OFS_SBP, $OFS_WHEEL) or bazel-bin."""
import glob
import os

_ROOT = (os.path.join(os.environ["TEST_SRCDIR"], os.environ.get("TEST_WORKSPACE", "oneflow_sbp"))
         if os.environ.get("TEST_SRCDIR")
         else os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                           "bazel-bin"))


def sbp_binary():
    return os.environ.get("OFS_SBP") or os.path.join(_ROOT, "cli", "sbp")


def wheel():
    if os.environ.get("OFS_WHEEL"):
        return os.environ["OFS_WHEEL"]
    found = glob.glob(os.path.join(_ROOT, "python", "oneflow_sbp-*.whl"))
    assert len(found) == 1, found
    return found[0]


def bootstrap_script():
    """tools/bootstrap.sh: the runfiles copy under bazel test, else the checkout's."""
    path = os.path.join(_ROOT, "tools", "bootstrap.sh") if os.environ.get("TEST_SRCDIR") else None
    if path and os.path.exists(path):
        return path
    return os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                        "tools", "bootstrap.sh")


def readme():
    """README.md: the runfiles copy under bazel test, else the checkout's."""
    path = os.path.join(_ROOT, "README.md") if os.environ.get("TEST_SRCDIR") else None
    if path and os.path.exists(path):
        return path
    return os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                        "README.md")


def child_env():
    """This environment, for a child Python that imports the package under
    test (and this interpreter's numpy and pytest)."""
    import sys

    import oneflow_sbp
    env = dict(os.environ)
    package_root = os.path.dirname(os.path.dirname(os.path.abspath(oneflow_sbp.__file__)))
    env["PYTHONPATH"] = os.pathsep.join([package_root] + sys.path)
    return env
