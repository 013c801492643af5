"""C++ protobuf targets built with Debian's protoc, without any download.

Bazel's own proto rules want to fetch @com_google_protobuf; we run the system
protoc through a genrule and link Debian's libprotobuf instead. protoc and
libprotobuf come from the same Debian release (3.21), so generated code and
runtime agree.
"""

def cc_proto_library_from_system_protoc(name, srcs, deps = []):
    """Generates <src>.pb.{h,cc} for every .proto in srcs and a cc_library.

    Imports are written relative to the workspace root ("proto/shape.proto"),
    and every imported file must be listed in srcs or come from deps' srcs.
    """
    base = native.package_name()
    hdrs = [s[:-len(".proto")] + ".pb.h" for s in srcs]
    ccs = [s[:-len(".proto")] + ".pb.cc" for s in srcs]
    native.genrule(
        name = name + "_protoc",
        srcs = srcs,
        outs = hdrs + ccs,
        cmd = "protoc --proto_path=. --cpp_out=$(GENDIR) " +
              " ".join(["%s/%s" % (base, s) for s in srcs]),
        message = "protoc " + name,
    )
    native.cc_library(
        name = name,
        srcs = ccs,
        hdrs = hdrs,
        deps = deps + ["//third_party:protobuf"],
    )
