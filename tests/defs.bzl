"""area_test: the GoogleTest target of one area, as tests/BUILD writes them."""

def area_test(name, deps = [], srcs = None, size = "small", **kwargs):
    """A cc_test of `<name>.cc` (unless srcs says otherwise) run by gtest_main.

    Args:
      name: the test, and the stem of its source file.
      deps: what it tests and the helpers it uses; gtest_main is added.
      srcs: defaults to [name + ".cc"].
      size: "small" unless the test needs more.
      **kwargs: any other cc_test attribute (args, data, tags, ...).
    """
    native.cc_test(
        name = name,
        size = size,
        srcs = srcs if srcs != None else [name + ".cc"],
        deps = deps + ["//third_party:gtest_main"],
        **kwargs
    )
