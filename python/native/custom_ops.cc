// Ops written in Python: a shape function, a 1-D SBP rule and a numpy
// kernel become an OpDef in OpRegistry::Global() and a CPU kernel in
// KernelRegistry::Global(), so the engine expands, filters, ranks, boxes
// and runs them like built-ins, and `verify` checks the rule by execution.
//
// The engine calls these functions from whatever thread infers (the
// caller's, with the GIL released) and from rank threads (kernels): each
// wrapper takes the GIL, and any Python exception becomes a status naming
// the op and the function ("custom op 'scale2': kernel raised
// ValueError: ..."), so it reaches the caller as an exception and never
// unwinds through the engine. The Python callables are kept for the life
// of the process (registries never forget an op) and deliberately never
// released, so no reference is dropped after the interpreter finalizes.
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "oneflow_sbp/rule_api/op_registry.h"
#include "oneflow_sbp/values/quoted_input.h"
#include "oneflow_sbp/rule_api/sbp_context.h"
#include "oneflow_sbp/values/status_macros.h"
#include "kernels/kernel_registry.h"
#include "kernels/verify/verifier.h"
#include "python/native/bindings.h"
#include "python/native/conversions.h"
#include "python/native/gil_release.h"

namespace oneflow_sbp::python {
namespace {

// A Python callable that is never released (see the header comment).
struct Callable {
  PyObject* fn;
  explicit Callable(const py::object& f) : fn(f.inc_ref().ptr()) {}
  py::object get() const { return py::reinterpret_borrow<py::object>(fn); }
};

py::list DescsToPython(const std::vector<TensorDesc>& descs) {
  py::list l;
  for (const TensorDesc& d : descs) {
    l.append(py::make_tuple(ShapeToPython(d.shape.dims()), std::string(DataTypeName(d.dtype))));
  }
  return l;
}

absl::StatusOr<TensorDesc> DescFromPython(const std::string& op, const std::string& arg,
                                          const py::handle& item) {
  try {
    py::tuple t = item.cast<py::tuple>();
    if (t.size() != 2) throw py::cast_error();
    TensorDesc d;
    OFS_ASSIGN_OR_RETURN(Shape shape, ShapeFromPython(t[0]));
    d.shape = shape;
    OFS_ASSIGN_OR_RETURN(DataType dt, DataTypeFromName(py::str(t[1])));
    d.dtype = dt;
    return d;
  } catch (const py::cast_error&) {
    return absl::InvalidArgumentError(absl::StrCat(
        "custom op ", QuotedInput(op), ": infer_shape must return one (shape, dtype) per output; got ",
        std::string(py::repr(item)), " for ", arg));
  }
}

// The op's shape function: calls infer_shape(input descs, attrs) with the
// GIL and checks one (shape, dtype) per output.
ShapeFn PythonShapeFn(const std::string& name, const std::vector<std::string>& inputs,
                      const std::vector<std::string>& outputs, const py::object& shape_fn) {
  auto shape = std::make_shared<Callable>(shape_fn);
  return [name, inputs, outputs, shape](ShapeContext& ctx) -> absl::Status {
    std::vector<TensorDesc> descs;
    for (const std::string& in : inputs) descs.push_back(ctx.input(in));
    py::gil_scoped_acquire gil;
    try {
      py::object r = shape->get()(DescsToPython(descs), AttrsToPython(ctx.op().attrs()));
      py::list l = r.cast<py::list>();
      if (l.size() != outputs.size()) {
        return absl::InvalidArgumentError(absl::StrCat("custom op ", QuotedInput(name), ": infer_shape returned ",
                                                       l.size(), " outputs; the op declares ",
                                                       outputs.size()));
      }
      for (size_t o = 0; o < outputs.size(); ++o) {
        OFS_ASSIGN_OR_RETURN(TensorDesc d, DescFromPython(name, outputs[o], l[o]));
        ctx.set_output(outputs[o], 0, d);
      }
      return absl::OkStatus();
    } catch (py::error_already_set& e) {
      return StatusFromPythonError(e, absl::StrCat("custom op ", QuotedInput(name), ": infer_shape"));
    } catch (const py::cast_error&) {
      return absl::InvalidArgumentError(
          absl::StrCat("custom op ", QuotedInput(name), ": infer_shape must return a list of (shape, dtype)"));
    }
  };
}

// The op's SBP rule: calls the Python rule and builds each signature it
// returns ((is_input, arg, index, kind, axis) entries).
GetSbpFn PythonSbpFn(const std::string& name, const std::vector<std::string>& inputs,
                     const std::vector<std::string>& outputs, const py::object& sbp_fn) {
  auto rule = std::make_shared<Callable>(sbp_fn);
  return [name, inputs, outputs, rule](SbpContext& ctx) -> absl::Status {
    std::vector<TensorDesc> descs;
    for (const std::string& in : inputs) descs.push_back(ctx.input_desc(in));
    py::gil_scoped_acquire gil;
    try {
      py::list sigs = rule->get()(DescsToPython(descs), AttrsToPython(ctx.op().attrs()),
                                  ctx.parallel_num());
      for (py::handle sig : sigs) {
        SbpSignatureBuilder builder = ctx.NewBuilder();
        for (py::handle entry : sig) {
          py::tuple e = entry.cast<py::tuple>();
          const bool is_input = e[0].cast<bool>();
          const std::string arg = e[1].cast<std::string>();
          const std::vector<OpArg>& args = is_input ? ctx.inputs() : ctx.outputs();
          const OpArg* found = nullptr;
          for (const OpArg& a : args) {
            if (a.name == arg) found = &a;
          }
          if (found == nullptr) {
            return absl::InvalidArgumentError(absl::StrCat(
                "custom op ", QuotedInput(name), ": sbp rule names ", is_input ? "input" : "output", " ",
                QuotedInput(arg), ", which the op does not declare"));
          }
          const std::string kind = e[3].cast<std::string>();
          if (kind == "S") {
            builder.Split(*found, e[4].cast<int>());
          } else if (kind == "B") {
            builder.Broadcast(*found);
          } else {
            builder.PartialSum(*found);
          }
        }
        builder.Build();
      }
      return ctx.status();
    } catch (py::error_already_set& e) {
      return StatusFromPythonError(e, absl::StrCat("custom op ", QuotedInput(name), ": sbp rule"));
    } catch (const py::cast_error& e) {
      return absl::InvalidArgumentError(absl::StrCat(
          "custom op ", QuotedInput(name), ": the sbp rule must return signatures built with ctx.builder() (",
          e.what(), ")"));
    }
  };
}

// The op's CPU kernel: the Python kernel on numpy views of the shards.
kernels::KernelFn PythonKernel(const std::string& name, const py::object& kernel) {
  auto fn = std::make_shared<Callable>(kernel);
  return [name, fn](kernels::KernelContext& kc) -> absl::Status {
        py::gil_scoped_acquire gil;
        try {
          py::list ins;
          for (int i = 0; i < kc.num_inputs(); ++i) ins.append(NumpyView(kc.input(i), false));
          py::object r = fn->get()(ins, AttrsToPython(kc.op().attrs()), kc.parallel_id());
          py::list outs = r.cast<py::list>();
          if (static_cast<int>(outs.size()) != kc.num_outputs()) {
            return kc.InvalidArgument(absl::StrCat("the Python kernel returned ", outs.size(),
                                                   " arrays; the op has ", kc.num_outputs(),
                                                   " outputs"));
          }
          for (int o = 0; o < kc.num_outputs(); ++o) {
            LocalTensor& out = kc.output(o);
            py::array a = py::array::ensure(outs[o]);
            if (!a) return kc.InvalidArgument(absl::StrCat("output ", o, " is not an array"));
            absl::StatusOr<LocalTensor> v = LocalFromNumpy(a, out.dtype());
            if (!v.ok()) return kc.Annotate(v.status());
            if (v->dims() != out.dims()) {
              return kc.InvalidArgument(absl::StrCat(
                  "the Python kernel returned ", kc.output_bn(o), " with dims ",
                  DimsToString(v->dims()), " on rank ", kc.parallel_id(), "; this rank's slice is ",
                  DimsToString(out.dims())));
            }
            if (out.byte_size() > 0) std::memcpy(out.raw_data(), v->raw_data(), out.byte_size());
          }
          return absl::OkStatus();
        } catch (py::error_already_set& e) {
          return StatusFromPythonError(e, absl::StrCat("custom op ", QuotedInput(name), ": kernel"));
        } catch (const py::cast_error&) {
          return absl::InvalidArgumentError(absl::StrCat(
              "custom op ", QuotedInput(name), ": the kernel must return a list of arrays"));
        }
      };
}

absl::Status RegisterPythonOp(const std::string& name, const std::vector<std::string>& inputs,
                              const std::vector<std::string>& outputs, const py::dict& attrs,
                              const py::object& shape_fn, const py::object& sbp_fn,
                              const py::object& kernel) {
  OpDefBuilder b(name);
  for (const std::string& in : inputs) b.Input(in);
  for (const std::string& out : outputs) b.Output(out);
  for (auto [k, v] : attrs) {
    OFS_ASSIGN_OR_RETURN(AttrValue value, AttrFromPython(py::str(k), v));
    b.Attr(py::str(k), value);
  }
  b.SetShapeFn(PythonShapeFn(name, inputs, outputs, shape_fn));
  b.SetGetSbpFn(PythonSbpFn(name, inputs, outputs, sbp_fn));
  OFS_RETURN_IF_ERROR(OpRegistry::Global().Register(b));
  return kernels::KernelRegistry::Global().Register(name, DeviceType::kCpu,
                                                    PythonKernel(name, kernel));
}

py::dict Verify(const std::string& op, const std::vector<int64_t>& mesh) {
  kernels::VerifyOptions o;
  o.ops = {op};
  o.mesh = mesh;
  absl::StatusOr<kernels::VerifyReport> r;
  {
    GilRelease release;
    r = kernels::RunVerify(SharedEngine().registry(), o);
  }
  const kernels::VerifyReport report = Unwrap(std::move(r));
  py::dict d;
  const kernels::OpVerification& v = report.ops.at(0);
  d["op"] = v.op;
  d["outcome"] = std::string(kernels::VerifyOutcomeName(v.outcome));
  d["ok"] = report.ok();
  d["checked"] = v.checked;
  d["inputs"] = v.inputs;
  d["reason"] = v.reason;
  d["report"] = kernels::VerifyReportToText(report);
  d["meshes"] = report.meshes;
  return d;
}

}  // namespace

void BindCustomOps(py::module_& m) {
  m.def("register_op",
        [](const std::string& name, const std::vector<std::string>& inputs,
           const std::vector<std::string>& outputs, const py::dict& attrs,
           const py::object& shape_fn, const py::object& sbp_fn, const py::object& kernel) {
          absl::Status s =
              RegisterPythonOp(name, inputs, outputs, attrs, shape_fn, sbp_fn, kernel);
          if (s.code() == absl::StatusCode::kAlreadyExists) throw py::value_error(std::string(s.message()));
          ThrowIfError(s);
        });
  m.def("verify", &Verify, py::arg("op"), py::arg("mesh") = std::vector<int64_t>());
}

}  // namespace oneflow_sbp::python
