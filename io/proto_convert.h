// Conversions between the engine's value types and the protobuf messages of
// proto/ (package `oneflow`, OneFlow's names and field numbers).
//
// Example:
//   oneflow::NdSbp proto = ToProto(*NdSbp::Parse("(S(0), B)"));
//   absl::StatusOr<NdSbp> back = FromProto(proto);   // == the original
//
// Protobuf lives at the boundary (dumps, files, the tool); the engine itself
// works on the value types. FromProto validates everything a hand-written
// or corrupted message may carry and answers kInvalidArgument naming the
// field and value; ToProto cannot fail.
#ifndef IO_PROTO_CONVERT_H_
#define IO_PROTO_CONVERT_H_

#include <vector>

#include "absl/status/statusor.h"
#include "oneflow_sbp/values/data_type.h"
#include "oneflow_sbp/values/nd_sbp.h"
#include "oneflow_sbp/values/placement.h"
#include "oneflow_sbp/values/sbp_parallel.h"
#include "oneflow_sbp/values/shape.h"
#include "oneflow_sbp/values/tensor_slice_view.h"
#include "proto/data_type.pb.h"
#include "proto/placement.pb.h"
#include "proto/sbp_parallel.pb.h"
#include "proto/shape.pb.h"
#include "proto/tensor_slice.pb.h"

namespace oneflow_sbp::io {

oneflow::SbpParallel ToProto(SbpParallel sbp);
// A message with no case set is the unset SbpParallel. Split axes outside
// [0, SbpParallel::kMaxSplitAxis] are errors.
absl::StatusOr<SbpParallel> FromProto(const oneflow::SbpParallel& proto);

oneflow::NdSbp ToProto(const NdSbp& nd_sbp);
// More than NdSbp::kMaxAxes entries, or a bad entry, is an error.
absl::StatusOr<NdSbp> FromProto(const oneflow::NdSbp& proto);

oneflow::ShapeProto ToProto(const Shape& shape);
absl::StatusOr<Shape> FromProto(const oneflow::ShapeProto& proto);

oneflow::DataType ToProto(DataType dtype);
// kInvalidDataType and kChar have no engine type and are errors.
absl::StatusOr<DataType> FromProto(oneflow::DataType proto);

// device_tag "cpu"/"cuda"; device_name holds "0:<lo>-<hi>" (or "0:<r>") runs
// of consecutive ranks; the hierarchy is always written.
oneflow::ParallelConf ToProto(const Placement& placement);
// Accepts device_name entries "<node>:<dev>", "<node>:<lo>-<hi>" and
// "@<rank>:<dev>" (the rank is the number after '@'). Only node 0 exists in
// oneflow_sbp; other nodes are kUnimplemented. Missing or empty hierarchy
// means [N].
absl::StatusOr<Placement> FromProto(const oneflow::ParallelConf& proto);

// Everything `sbp slices` prints: the request and each rank's ranges.
// Requires slices.size() == placement.parallel_num().
oneflow::TensorSliceViewProto ToProto(const Shape& shape, DataType dtype,
                                      const NdSbp& nd_sbp,
                                      const Placement& placement,
                                      const std::vector<TensorSlice>& slices);

}  // namespace oneflow_sbp::io
#endif  // IO_PROTO_CONVERT_H_
