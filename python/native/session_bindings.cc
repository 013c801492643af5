// The Python bindings of Session and Tensor (session.h): making global
// tensors, ops, boxing, autograd, reading shards.
#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "eager/apply.h"
#include "eager/autograd.h"
#include "eager/tensor_layout.h"
#include "oneflow_sbp/values/nd_sbp_validation.h"
#include "oneflow_sbp/values/status_macros.h"
#include "python/native/bindings.h"
#include "python/native/controller.h"
#include "python/native/conversions.h"
#include "python/native/gil_release.h"
#include "python/native/host_array.h"
#include "python/native/session.h"

namespace oneflow_sbp::python {
namespace {

void CheckSameSession(const std::shared_ptr<Session>& s, const Tensor& t) {
  if (t.session != s) {
    throw py::value_error(
        "the tensor belongs to another session (made before oneflow_sbp.init(...) was called "
        "again?)");
  }
}

// The full array -> a global tensor: each rank thread copies its own
// slice straight from the array's buffer (host_array.h), so the array is
// never copied whole (unless numpy must first make it C-ordered or it
// converts to another dtype).
Tensor FromFull(std::shared_ptr<Session> s, const py::array& array, const std::string& placement,
                const std::string& sbp, bool requires_grad, const std::optional<std::string>& dtype) {
  std::optional<DataType> want;
  if (dtype) want = Unwrap(DataTypeFromName(*dtype));
  py::object keep;
  auto full = std::make_shared<const HostArray>(Unwrap(HostArrayOf(array, want, &keep)));
  const Shape shape = Unwrap(Shape::Make(full->dims));
  const Placement p = ParsePlacement(placement);
  const NdSbp nd = ParseNdSbp(sbp);
  ThrowIfError(ValidateNdSbp(nd, shape, p.hierarchy()));
  s->EnsureRanks(p);
  auto out = std::make_shared<std::vector<GlobalTensor>>(s->num_local());
  try {
    s->Run([full, shape, p, nd, requires_grad, out](EagerContext& ctx, int i) -> absl::Status {
      OFS_ASSIGN_OR_RETURN(LocalTensor local, ShardOf(*full, shape, p, nd, ctx.rank()));
      OFS_ASSIGN_OR_RETURN(GlobalTensor t, eager::ToGlobal(ctx, local, shape, p, nd));
      (*out)[i] = std::move(t);
      if (requires_grad) (*out)[i].set_requires_grad(true);
      return absl::OkStatus();
    });
  } catch (...) {
    // Interrupted: ranks may still be reading the array's buffer.
    if (keep) s->KeepWhileInUse(std::move(keep), full);
    throw;
  }
  return s->Wrap(std::move(*out));
}

// Local shards -> a global tensor. `arrays` has one entry per local rank
// (embedded: every rank of the world, None outside the placement);
// `shape` None: the logical shape assuming even splits.
Tensor FromLocal(std::shared_ptr<Session> s, const py::list& arrays, const std::string& placement,
                 const std::string& sbp, const py::object& shape, bool requires_grad) {
  const Placement p = ParsePlacement(placement);
  const NdSbp nd = ParseNdSbp(sbp);
  s->EnsureRanks(p);
  const int n = s->num_local();
  if (static_cast<int>(py::len(arrays)) != n) {
    throw py::value_error(absl::StrCat("from_local: got ", py::len(arrays),
                                       " local arrays; this process runs ", n,
                                       " rank(s): give one per rank (None outside the placement)"));
  }
  std::vector<LocalTensor> locals(n);
  for (int i = 0; i < n; ++i) {
    if (!arrays[i].is_none()) locals[i] = Unwrap(LocalFromNumpy(arrays[i].cast<py::array>()));
  }
  Shape logical;
  if (!shape.is_none()) {
    logical = Unwrap(ShapeFromPython(shape));
  } else {
    const LocalTensor* first = nullptr;
    for (const LocalTensor& l : locals) {
      if (l.defined()) {
        first = &l;
        break;
      }
    }
    if (first == nullptr) throw py::value_error("from_local: no rank holds a local array");
    std::vector<int64_t> dims(first->dims().begin(), first->dims().end());
    for (int a = 0; a < nd.size(); ++a) {
      if (!nd[a].is_split()) continue;
      const int axis = nd[a].split_axis();
      if (axis >= static_cast<int>(dims.size())) {
        throw py::value_error(absl::StrCat("from_local: ", nd.ToString(), " splits dim ", axis,
                                           " of a rank-", dims.size(), " local tensor"));
      }
      dims[axis] *= p.hierarchy()[a];
    }
    logical = Unwrap(Shape::Make(dims));
  }
  auto out = std::make_shared<std::vector<GlobalTensor>>(n);
  s->Run([locals, logical, p, nd, requires_grad, out](EagerContext& ctx, int i) -> absl::Status {
    if (!locals[i].defined()) {
      absl::StatusOr<int64_t> id = p.ParallelIdOf(ctx.rank());
      if (!id.ok()) {
        DataType dt = DataType::kFloat32;
        for (const LocalTensor& l : locals) {
          if (l.defined()) dt = l.dtype();
        }
        (*out)[i] = GlobalTensor(TensorDesc{logical, dt}, p, nd, LocalTensor());
        return absl::OkStatus();
      }
    }
    OFS_ASSIGN_OR_RETURN(GlobalTensor t, eager::ToGlobal(ctx, locals[i], logical, p, nd));
    (*out)[i] = std::move(t);
    if (requires_grad) (*out)[i].set_requires_grad(true);
    return absl::OkStatus();
  });
  return s->Wrap(std::move(*out));
}

std::vector<std::vector<GlobalTensor>> PerRankInputs(const std::shared_ptr<Session>& s,
                                                     const std::vector<Tensor*>& tensors) {
  const int n = s->num_local();
  std::vector<std::vector<GlobalTensor>> in(n);
  for (int i = 0; i < n; ++i) {
    in[i].reserve(tensors.size());
    for (const Tensor* t : tensors) in[i].push_back(t->At(i));
  }
  return in;
}

py::list Apply(std::shared_ptr<Session> s, const std::string& op, const std::vector<Tensor*>& tensors,
               const py::dict& attrs) {
  for (const Tensor* t : tensors) CheckSameSession(s, *t);
  const AttrMap attr_map = Unwrap(AttrsFromPython(attrs));
  std::shared_ptr<const OpCall> call = s->Call(op, static_cast<int>(tensors.size()), attr_map);
  for (const Tensor* t : tensors) s->EnsureRanks(t->meta().placement());
  const int n = s->num_local();
  struct State {
    std::vector<std::vector<GlobalTensor>> in, out;
  };
  auto st = std::make_shared<State>();
  st->in = PerRankInputs(s, tensors);
  st->out.resize(n);
  s->Run([call, st](EagerContext& ctx, int i) -> absl::Status {
    OFS_ASSIGN_OR_RETURN(std::vector<GlobalTensor> r, eager::Apply(ctx, call, st->in[i]));
    st->out[i] = std::move(r);
    return absl::OkStatus();
  });
  py::list result;
  for (int o = 0; o < call->num_outputs(); ++o) {
    std::vector<GlobalTensor> ranks(n);
    for (int i = 0; i < n; ++i) ranks[i] = st->out[i][o];
    result.append(s->Wrap(std::move(ranks)));
  }
  return result;
}

// One local rank's index for device rank `rank`; raises when this process
// does not run it.
int LocalIndexOf(Session& s, int rank) {
  const std::vector<int>& local = s.controller().local_ranks();
  for (size_t i = 0; i < local.size(); ++i) {
    if (local[i] == rank) return static_cast<int>(i);
  }
  throw py::value_error(absl::StrCat("rank ", rank, " is not run by this process (it runs ",
                                     local.size() == 1 ? "rank " : "ranks 0-",
                                     local.size() == 1 ? local[0] : local.back(), ")"));
}

py::array ToNumpy(const Tensor& t) {
  std::shared_ptr<Session> s = t.session;
  const int n = s->num_local();
  std::vector<GlobalTensor> ranks(n);
  for (int i = 0; i < n; ++i) ranks[i] = t.At(i);
  auto fulls = std::make_shared<std::vector<LocalTensor>>(n);
  s->Run([ranks, fulls](EagerContext& ctx, int i) -> absl::Status {
    OFS_ASSIGN_OR_RETURN(LocalTensor f, eager::ToFull(ctx, ranks[i]));
    (*fulls)[i] = std::move(f);
    return absl::OkStatus();
  });
  for (int i = 0; i < n; ++i) {
    const LocalTensor& f = (*fulls)[i];
    if (!f.defined()) continue;
    // An all-B tensor's full value is its own shard: hand out a copy so
    // writing the array never changes the tensor.
    const bool shares = f.SharesStorageWith(ranks[i].local());
    return NumpyView(shares ? f.Clone() : f, /*writable=*/true);
  }
  throw py::value_error(absl::StrCat("numpy(): no rank of this process is in ",
                                     t.meta().placement().ToString(),
                                     "; call it on a rank of the placement"));
}

Tensor Redistribute(const Tensor& t, const std::string& placement, const std::string& sbp) {
  std::shared_ptr<Session> s = t.session;
  const Placement p = ParsePlacement(placement);
  const NdSbp nd = ParseNdSbp(sbp);
  s->EnsureRanks(p);
  const int n = s->num_local();
  std::vector<GlobalTensor> in(n);
  for (int i = 0; i < n; ++i) in[i] = t.At(i);
  auto out = std::make_shared<std::vector<GlobalTensor>>(n);
  s->Run([in, p, nd, out](EagerContext& ctx, int i) -> absl::Status {
    OFS_ASSIGN_OR_RETURN(GlobalTensor r, eager::Redistribute(ctx, in[i], p, nd));
    (*out)[i] = std::move(r);
    return absl::OkStatus();
  });
  return s->Wrap(std::move(*out));
}

void Backward(const Tensor& loss, const std::optional<Tensor>& grad) {
  std::shared_ptr<Session> s = loss.session;
  if (grad) CheckSameSession(s, *grad);
  const int n = s->num_local();
  std::vector<GlobalTensor> losses(n), grads(n);
  for (int i = 0; i < n; ++i) {
    losses[i] = loss.At(i);
    if (grad) grads[i] = grad->At(i);
  }
  s->Run([losses, grads](EagerContext& ctx, int i) -> absl::Status {
    return eager::Backward(ctx, losses[i], grads[i]);
  });
}

std::optional<Tensor> Grad(const Tensor& t) {
  if (!t.meta().grad().defined()) return std::nullopt;
  std::vector<GlobalTensor> g;
  for (const GlobalTensor& r : t.ranks) g.push_back(r.grad());
  return t.session->Wrap(std::move(g));
}

// Google-Benchmark-style timing from C++ for the Python overhead
// comparison: `iters` calls of `op` on `x` through the same controller,
// no Python in the loop. Seconds per call.
// `inputs` (one or more tensors of one session): add and mm take two, so
// tools/bench/peers.py times them against DTensor's the same way.
double TimeCppApply(const std::vector<const Tensor*>& inputs, const std::string& op, int iters) {
  if (inputs.empty()) throw py::value_error(op + ": time_cpp_apply needs at least one tensor");
  std::shared_ptr<Session> s = inputs[0]->session;
  for (const Tensor* t : inputs) {
    if (t->session != s) throw py::value_error(op + ": time_cpp_apply's tensors are of two sessions");
  }
  std::shared_ptr<const OpCall> call = s->Call(op, static_cast<int>(inputs.size()), AttrMap());
  const int n = s->num_local();
  std::vector<std::vector<GlobalTensor>> in(n);
  for (int i = 0; i < n; ++i) {
    for (const Tensor* t : inputs) in[i].push_back(t->At(i));
  }
  Controller& c = s->controller();
  absl::Status status;
  absl::Time start;
  {
    GilRelease release;
    start = absl::Now();
    for (int k = 0; k < iters && status.ok(); ++k) {
      status = c.Run(
          [&](EagerContext& ctx, int i) -> absl::Status {
            return eager::Apply(ctx, call, in[i]).status();
          },
          nullptr);
    }
  }
  ThrowIfError(status);
  return absl::ToDoubleSeconds(absl::Now() - start) / std::max(iters, 1);
}

}  // namespace

namespace {

// Tensor: a global tensor's metadata, autograd fields and shard views.
void BindTensor(py::module_& m) {
  py::class_<Tensor>(m, "Tensor")
      .def_property_readonly("shape", [](const Tensor& t) {
        return ShapeToPython(t.meta().shape().dims());
      })
      .def_property_readonly("ndim", [](const Tensor& t) { return t.meta().shape().rank(); })
      .def_property_readonly("dtype", [](const Tensor& t) {
        return std::string(DataTypeName(t.meta().dtype()));
      })
      .def_property_readonly("_nd_sbp", [](const Tensor& t) { return t.meta().nd_sbp().ToString(); })
      .def_property_readonly("_placement", [](const Tensor& t) {
        return t.meta().placement().ToString();
      })
      .def_property("requires_grad",
                    [](const Tensor& t) { return t.meta().requires_grad(); },
                    [](Tensor& t, bool on) {
                      for (GlobalTensor& r : t.ranks) r.set_requires_grad(on);
                    })
      .def_property_readonly("is_leaf", [](const Tensor& t) {
        return t.meta().autograd().grad_fn == nullptr;
      })
      .def_property(
          "grad", &Grad,
          [](Tensor& t, const std::optional<Tensor>& g) {
            if (g) {
              CheckSameSession(t.session, *g);
              if (g->meta().desc() != t.meta().desc()) {
                throw py::value_error(absl::StrCat("grad ", g->meta().desc().ToString(),
                                                   " does not match the tensor's ",
                                                   t.meta().desc().ToString()));
              }
            }
            for (size_t i = 0; i < t.ranks.size(); ++i) {
              t.ranks[i].autograd().grad = g ? g->At(i) : GlobalTensor();
            }
          })
      .def("detach", [](const Tensor& t) {
        std::vector<GlobalTensor> d;
        for (const GlobalTensor& r : t.ranks) d.push_back(eager::Detach(r));
        return t.session->Wrap(std::move(d));
      })
      .def("numpy", &ToNumpy)
      .def("_to_local", [](const Tensor& t, int rank) {
        const int i = LocalIndexOf(*t.session, rank);
        const GlobalTensor g = t.At(i);
        if (!g.local().defined()) return py::object(py::none());
        return py::object(NumpyView(g.local(), /*writable=*/false));
      })
      .def("_redistribute", &Redistribute)
      .def("_backward", &Backward)
      .def("_same", [](const Tensor& a, const Tensor& b) { return a.meta().SameTensorAs(b.meta()); })
      .def("__repr__", [](const Tensor& t) { return absl::StrCat("tensor(", t.meta().ToString(), ")"); });
}

// Session: the rank world driven from Python, and the calls that make and
// apply tensors.
void BindSessionClass(py::module_& m) {
  py::class_<Session, std::shared_ptr<Session>>(m, "Session")
      .def(py::init<int, double, bool>(), py::arg("world_size"), py::arg("timeout_s"),
           py::arg("launched"))
      .def_property_readonly("world_size", [](Session& s) { return s.controller().world_size(); })
      .def_property_readonly("local_ranks", [](Session& s) { return s.controller().local_ranks(); })
      .def_property_readonly("launched", [](Session& s) { return s.controller().launched(); })
      .def_property_readonly("rebuilds", [](Session& s) { return s.controller().rebuilds(); })
      .def_property("grad_enabled", [](Session& s) { return s.controller().grad_enabled(); },
                    [](Session& s, bool on) { s.controller().set_grad_enabled(on); })
      .def("set_cost_policy", [](Session& s, const std::string& name) {
        ThrowIfError(s.controller().set_cost_policy(name));
      })
      .def_property_readonly("cost_policy", [](Session& s) {
        return s.controller().options().cost_policy.str();
      })
      .def("tensor", &FromFull, py::arg("array"), py::arg("placement"), py::arg("sbp"),
           py::arg("requires_grad") = false, py::arg("dtype") = std::nullopt)
      .def("from_local", &FromLocal, py::arg("arrays"), py::arg("placement"), py::arg("sbp"),
           py::arg("shape") = py::none(), py::arg("requires_grad") = false)
      .def("apply", &Apply)
      // call(op, *tensors, **attrs): the package's hot path; one output
      // comes back bare, several as a tuple.
      .def("call", [](std::shared_ptr<Session> s, const py::args& args, const py::kwargs& kwargs) {
        if (args.empty()) throw py::type_error("call(op, *tensors, **attrs): the op name is missing");
        const std::string op = args[0].cast<std::string>();
        std::vector<Tensor*> tensors;
        tensors.reserve(args.size() - 1);
        for (size_t i = 1; i < args.size(); ++i) {
          if (!py::isinstance<Tensor>(args[i])) {
            throw py::type_error(absl::StrCat(op, ": input ", i - 1, " is a ",
                                              std::string(py::str(args[i].get_type().attr("__name__"))),
                                              ", not a global tensor (oneflow_sbp.tensor(...))"));
          }
          tensors.push_back(args[i].cast<Tensor*>());
        }
        py::list r = Apply(s, op, tensors, kwargs);
        if (r.size() == 1) return py::object(r[0]);
        return py::object(py::tuple(r));
      })
      .def("time_cpp_apply", [](Session&, const Tensor& x, const std::string& op, int iters) {
        return TimeCppApply({&x}, op, iters);
      })
      .def("time_cpp_apply", [](Session&, const std::vector<const Tensor*>& xs,
                                const std::string& op, int iters) {
        return TimeCppApply(xs, op, iters);
      })
      .def("close", &Session::Close);
}

}  // namespace

void BindSession(py::module_& m) {
  BindTensor(m);
  BindSessionClass(m);
}

}  // namespace oneflow_sbp::python
