// LoadGlobal: a global tensor straight from a safetensors file, each rank
// reading only the bytes of its own slice.
//
//   std::unique_ptr<SafetensorsFile> f = *SafetensorsFile::Open(path);   // shared by the ranks
//   // on every rank of the placement:
//   GlobalTensor w = *LoadGlobal(ctx, *f, "encoder.layer.0.attention.self.query.weight",
//                                placement, *NdSbp::Parse("(B, S(0))"));
//
// On a split axis a rank reads its part; broadcast axes read the same
// bytes on every rank; on a partial-sum axis the rank at coordinate 0 of
// the group reads the value and the others hold zeros (a valid P layout
// of it). Reads are one pread per contiguous run of the slice
// (SafetensorsFile::ReadRegion), so the bytes a rank reads equal its
// slice's bytes. Ranks outside the placement read nothing.
#ifndef CHECKPOINT_SHARDED_LOAD_H_
#define CHECKPOINT_SHARDED_LOAD_H_

#include <optional>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "eager/eager_context.h"
#include "eager/global_tensor.h"
#include "checkpoint/safetensors.h"
#include "oneflow_sbp/values/nd_sbp.h"
#include "oneflow_sbp/values/placement.h"

namespace oneflow_sbp::checkpoint {

// kNotFound for a missing tensor; kInvalidArgument for an nd_sbp that
// does not fit the tensor's shape or the placement; `as` converts the
// dtype after reading (e.g. an F16 checkpoint into f32 weights).
absl::StatusOr<eager::GlobalTensor> LoadGlobal(eager::EagerContext& ctx, SafetensorsFile& file,
                                               absl::string_view name, const Placement& placement,
                                               const NdSbp& nd_sbp,
                                               std::optional<DataType> as = std::nullopt);

// A LocalTensor of `dtype` holding `t`'s values (a copy; `t` itself when
// the dtype already matches).
absl::StatusOr<LocalTensor> ConvertDtype(const LocalTensor& t, DataType dtype);

}  // namespace oneflow_sbp::checkpoint
#endif  // CHECKPOINT_SHARDED_LOAD_H_
