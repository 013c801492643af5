// Files from Python: safetensors (whole files as numpy, and global
// tensors read rank by rank) and distributed checkpoints (checkpoint/checkpoint.h)
// saved and loaded through the session's ranks.
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "checkpoint/checkpoint.h"
#include "checkpoint/safetensors.h"
#include "checkpoint/sharded_load.h"
#include "oneflow_sbp/values/quoted_input.h"
#include "oneflow_sbp/values/status_macros.h"
#include "python/native/bindings.h"
#include "python/native/conversions.h"
#include "python/native/gil_release.h"
#include "python/native/session.h"

namespace oneflow_sbp::python {
namespace {

std::shared_ptr<checkpoint::SafetensorsFile> OpenSafetensors(const std::string& path) {
  absl::StatusOr<std::unique_ptr<checkpoint::SafetensorsFile>> f;
  {
    GilRelease release;
    f = checkpoint::SafetensorsFile::Open(path);
  }
  return std::shared_ptr<checkpoint::SafetensorsFile>(Unwrap(std::move(f)).release());
}

// {name: global tensor}: every rank reads only its slice of each tensor.
py::dict LoadSafetensors(std::shared_ptr<Session> s, const std::string& path,
                         const std::string& placement, const std::string& sbp,
                         const std::optional<std::vector<std::string>>& names) {
  std::shared_ptr<checkpoint::SafetensorsFile> file = OpenSafetensors(path);
  std::vector<std::string> wanted;
  if (names) {
    wanted = *names;
  } else {
    for (const checkpoint::SafetensorsEntry& e : file->entries()) wanted.push_back(e.name);
  }
  const Placement p = ParsePlacement(placement);
  const NdSbp nd = ParseNdSbp(sbp);
  s->EnsureRanks(p);
  const int n = s->num_local();
  auto out = std::make_shared<std::vector<std::vector<GlobalTensor>>>(
      wanted.size(), std::vector<GlobalTensor>(n));
  s->Run([file, wanted, p, nd, out](EagerContext& ctx, int i) -> absl::Status {
    for (size_t k = 0; k < wanted.size(); ++k) {
      // A tensor a layout does not fit (a bias under S(1)) is broadcast
      // instead: the layout names how matrices split.
      NdSbp layout = nd;
      const checkpoint::SafetensorsEntry* e = file->Find(wanted[k]);
      if (e != nullptr) {
        for (int a = 0; a < layout.size(); ++a) {
          if (layout[a].is_split() && layout[a].split_axis() >= static_cast<int>(e->shape.size())) {
            layout.set(a, SbpParallel::Broadcast());
          }
        }
      }
      OFS_ASSIGN_OR_RETURN(GlobalTensor t, checkpoint::LoadGlobal(ctx, *file, wanted[k], p,
          layout));
      (*out)[k][i] = std::move(t);
    }
    return absl::OkStatus();
  });
  py::dict d;
  for (size_t k = 0; k < wanted.size(); ++k) d[py::str(wanted[k])] = s->Wrap((*out)[k]);
  return d;
}

void SaveCheckpoint(std::shared_ptr<Session> s, const std::string& dir, const py::dict& tensors,
                    const std::map<std::string, std::string>& metadata) {
  std::vector<std::string> names;
  std::vector<Tensor*> ts;
  for (auto [k, v] : tensors) {
    names.push_back(py::str(k));
    if (!py::isinstance<Tensor>(v)) {
      throw py::type_error(absl::StrCat("checkpoint.save: ", QuotedInput(names.back()),
                                        " is not a global tensor"));
    }
    ts.push_back(v.cast<Tensor*>());
    if (ts.back()->session != s) throw py::value_error("the tensor belongs to another session");
  }
  const int n = s->num_local();
  std::vector<std::vector<checkpoint::NamedTensor>> per_rank(n);
  for (int i = 0; i < n; ++i) {
    for (size_t k = 0; k < ts.size(); ++k) per_rank[i].push_back({names[k], ts[k]->At(i)});
  }
  s->Run([dir, per_rank, metadata](EagerContext& ctx, int i) {
    return checkpoint::SaveCheckpoint(ctx, dir, per_rank[i], metadata);
  });
}

py::dict LoadCheckpoint(std::shared_ptr<Session> s, const std::string& source,
                        const py::dict& targets) {
  std::vector<checkpoint::CheckpointTarget> ts;
  for (auto [k, v] : targets) {
    py::tuple t = v.cast<py::tuple>();
    const Placement p = ParsePlacement(t[0].cast<std::string>());
    s->EnsureRanks(p);
    ts.push_back({py::str(k), p, ParseNdSbp(t[1].cast<std::string>()), std::nullopt});
  }
  const int n = s->num_local();
  auto out = std::make_shared<std::vector<std::vector<GlobalTensor>>>(n);
  s->Run([source, ts, out](EagerContext& ctx, int i) -> absl::Status {
    OFS_ASSIGN_OR_RETURN(std::vector<GlobalTensor> r, checkpoint::LoadCheckpoint(ctx, source, ts));
    (*out)[i] = std::move(r);
    return absl::OkStatus();
  });
  py::dict d;
  for (size_t k = 0; k < ts.size(); ++k) {
    std::vector<GlobalTensor> ranks(n);
    for (int i = 0; i < n; ++i) ranks[i] = (*out)[i][k];
    d[py::str(ts[k].name)] = s->Wrap(std::move(ranks));
  }
  return d;
}

}  // namespace

void BindIo(py::module_& m) {
  m.def("read_safetensors", [](const std::string& path) {
    std::shared_ptr<checkpoint::SafetensorsFile> f = OpenSafetensors(path);
    py::dict d;
    for (const checkpoint::SafetensorsEntry& e : f->entries()) {
      absl::StatusOr<LocalTensor> t;
      {
        GilRelease release;
        t = f->Read(e.name);
      }
      d[py::str(e.name)] = NumpyView(Unwrap(std::move(t)), /*writable=*/true);
    }
    return py::make_tuple(d, f->metadata());
  });
  m.def("write_safetensors", [](const std::string& path, const py::dict& arrays,
                                const std::map<std::string, std::string>& metadata) {
    std::vector<std::pair<std::string, LocalTensor>> ts;
    for (auto [k, v] : arrays) {
      ts.emplace_back(py::str(k), Unwrap(LocalFromNumpy(py::array::ensure(v))));
    }
    GilRelease release;
    absl::Status s = checkpoint::WriteSafetensors(path, ts, metadata);
    py::gil_scoped_acquire acquire;
    ThrowIfError(s);
  });
  m.def("checkpoint_inspect", [](const std::string& source) {
    return checkpoint::CheckpointIndexToText(Unwrap(checkpoint::ReadCheckpointIndex(source)));
  });
  m.def("checkpoint_export", [](const std::string& source, const std::string& out) {
    absl::Status s;
    {
      GilRelease release;
      s = checkpoint::ExportCheckpoint(source, out);
    }
    ThrowIfError(s);
  });
  py::class_<Session, std::shared_ptr<Session>> session =
      py::reinterpret_borrow<py::class_<Session, std::shared_ptr<Session>>>(m.attr("Session"));
  session.def("load_safetensors", &LoadSafetensors)
      .def("checkpoint_save", &SaveCheckpoint)
      .def("checkpoint_load", &LoadCheckpoint);
}

}  // namespace oneflow_sbp::python
