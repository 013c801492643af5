#include "io/proto_convert.h"

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "oneflow_sbp/values/check.h"
#include "oneflow_sbp/values/quoted_input.h"
#include "oneflow_sbp/values/status_macros.h"

namespace oneflow_sbp::io {

oneflow::SbpParallel ToProto(SbpParallel sbp) {
  oneflow::SbpParallel proto;
  if (sbp.is_split()) {
    proto.mutable_split_parallel()->set_axis(sbp.split_axis());
  } else if (sbp.is_broadcast()) {
    proto.mutable_broadcast_parallel();
  } else if (sbp.is_partial_sum()) {
    proto.mutable_partial_sum_parallel();
  } else if (sbp.is_partial_max()) {
    proto.mutable_partial_max_parallel();
  } else if (sbp.is_partial_min()) {
    proto.mutable_partial_min_parallel();
  }
  return proto;
}

absl::StatusOr<SbpParallel> FromProto(const oneflow::SbpParallel& proto) {
  switch (proto.parallel_type_case()) {
    case oneflow::SbpParallel::kSplitParallel:
      return SbpParallel::MakeSplit(proto.split_parallel().axis());
    case oneflow::SbpParallel::kBroadcastParallel:
      return SbpParallel::Broadcast();
    case oneflow::SbpParallel::kPartialSumParallel:
      return SbpParallel::PartialSum();
    case oneflow::SbpParallel::kPartialMaxParallel:
      return SbpParallel::PartialMax();
    case oneflow::SbpParallel::kPartialMinParallel:
      return SbpParallel::PartialMin();
    case oneflow::SbpParallel::PARALLEL_TYPE_NOT_SET:
      return SbpParallel();
  }
  return absl::InvalidArgumentError("SbpParallel has an unknown parallel_type");
}

oneflow::NdSbp ToProto(const NdSbp& nd_sbp) {
  oneflow::NdSbp proto;
  for (int i = 0; i < nd_sbp.size(); ++i) {
    *proto.add_sbp_parallel() = ToProto(nd_sbp[i]);
  }
  return proto;
}

absl::StatusOr<NdSbp> FromProto(const oneflow::NdSbp& proto) {
  if (proto.sbp_parallel_size() > NdSbp::kMaxAxes) {
    return absl::InvalidArgumentError(absl::StrCat(
        "NdSbp has ", proto.sbp_parallel_size(), " sbp_parallel entries; at most ",
        NdSbp::kMaxAxes, " mesh axes are supported"));
  }
  NdSbp nd;
  for (int i = 0; i < proto.sbp_parallel_size(); ++i) {
    absl::StatusOr<SbpParallel> sbp = FromProto(proto.sbp_parallel(i));
    if (!sbp.ok()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "NdSbp.sbp_parallel[", i, "]: ", sbp.status().message()));
    }
    nd.push_back(*sbp);
  }
  return nd;
}

oneflow::ShapeProto ToProto(const Shape& shape) {
  oneflow::ShapeProto proto;
  for (int64_t d : shape.dims()) proto.add_dim(d);
  return proto;
}

absl::StatusOr<Shape> FromProto(const oneflow::ShapeProto& proto) {
  return Shape::Make(proto.dim());
}

namespace {

struct DataTypePair {
  DataType dtype;
  oneflow::DataType proto;
};

constexpr DataTypePair kDataTypePairs[] = {
    {DataType::kFloat16, oneflow::kFloat16}, {DataType::kBFloat16, oneflow::kBFloat16},
    {DataType::kFloat32, oneflow::kFloat},   {DataType::kFloat64, oneflow::kDouble},
    {DataType::kInt8, oneflow::kInt8},       {DataType::kInt32, oneflow::kInt32},
    {DataType::kInt64, oneflow::kInt64},     {DataType::kUInt8, oneflow::kUInt8},
    {DataType::kBool, oneflow::kBool},
};

}  // namespace

oneflow::DataType ToProto(DataType dtype) {
  for (const DataTypePair& p : kDataTypePairs) {
    if (p.dtype == dtype) return p.proto;
  }
  OFS_CHECK(false) << "unmapped dtype " << static_cast<int>(dtype);
  return oneflow::kInvalidDataType;
}

absl::StatusOr<DataType> FromProto(oneflow::DataType proto) {
  for (const DataTypePair& p : kDataTypePairs) {
    if (p.proto == proto) return p.dtype;
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "data type ", oneflow::DataType_Name(proto), " (", static_cast<int>(proto),
      ") is not supported; use one of f16 bf16 f32 f64 i8 i32 i64 u8 bool"));
}

oneflow::ParallelConf ToProto(const Placement& placement) {
  oneflow::ParallelConf proto;
  proto.set_device_tag(std::string(DeviceTypeName(placement.device_type())));
  const absl::Span<const int64_t> r = placement.ranks();
  for (size_t i = 0; i < r.size();) {
    size_t j = i;
    while (j + 1 < r.size() && r[j + 1] == r[j] + 1) ++j;
    proto.add_device_name(j == i ? absl::StrCat("0:", r[i])
                                 : absl::StrCat("0:", r[i], "-", r[j]));
    i = j + 1;
  }
  for (int64_t h : placement.hierarchy()) proto.mutable_hierarchy()->add_dim(h);
  return proto;
}

namespace {

absl::Status ParseNonNegative(absl::string_view text, absl::string_view entry,
                              int64_t* out) {
  text = absl::StripAsciiWhitespace(text);
  bool digits = !text.empty() && text.size() <= 12;
  for (char c : text) digits = digits && c >= '0' && c <= '9';
  if (!digits || !absl::SimpleAtoi(text, out)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "ParallelConf.device_name ", QuotedInput(entry), ": ", QuotedInput(text),
        " is not a non-negative integer"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<Placement> FromProto(const oneflow::ParallelConf& proto) {
  absl::StatusOr<DeviceType> type = ParseDeviceType(proto.device_tag());
  if (!type.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "ParallelConf.device_tag: ", type.status().message()));
  }
  std::vector<int64_t> ranks;
  for (const std::string& entry : proto.device_name()) {
    absl::string_view e = entry;
    const bool global_rank = absl::ConsumePrefix(&e, "@");
    std::vector<absl::string_view> parts = absl::StrSplit(e, ':');
    if (parts.size() != 2) {
      return absl::InvalidArgumentError(absl::StrCat(
          "ParallelConf.device_name ", QuotedInput(entry),
          ": expected <node>:<dev>, <node>:<lo>-<hi> or @<rank>:<dev>"));
    }
    int64_t head = 0;
    absl::Status s = ParseNonNegative(parts[0], entry, &head);
    OFS_RETURN_IF_ERROR(s);
    if (global_rank) {
      int64_t dev = 0;
      s = ParseNonNegative(parts[1], entry, &dev);
      OFS_RETURN_IF_ERROR(s);
      ranks.push_back(head);
      continue;
    }
    if (head != 0) {
      return absl::UnimplementedError(absl::StrCat(
          "ParallelConf.device_name ", QuotedInput(entry),
          ": oneflow_sbp places every rank on node 0; node ", head,
          " is not supported"));
    }
    std::vector<absl::string_view> ends = absl::StrSplit(parts[1], '-');
    if (ends.size() > 2) {
      return absl::InvalidArgumentError(absl::StrCat(
          "ParallelConf.device_name ", QuotedInput(entry), ": bad device range"));
    }
    int64_t lo = 0;
    s = ParseNonNegative(ends[0], entry, &lo);
    OFS_RETURN_IF_ERROR(s);
    int64_t hi = lo;
    if (ends.size() == 2) {
      s = ParseNonNegative(ends[1], entry, &hi);
      OFS_RETURN_IF_ERROR(s);
    }
    if (hi < lo || hi - lo >= Placement::kMaxParallelNum) {
      return absl::InvalidArgumentError(absl::StrCat(
          "ParallelConf.device_name ", QuotedInput(entry), ": bad device range"));
    }
    for (int64_t d = lo; d <= hi; ++d) ranks.push_back(d);
  }
  std::vector<int64_t> hierarchy(proto.hierarchy().dim().begin(),
                                 proto.hierarchy().dim().end());
  absl::StatusOr<Placement> placement = Placement::Make(*type, ranks, hierarchy);
  if (!placement.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("ParallelConf: ", placement.status().message()));
  }
  return placement;
}

oneflow::TensorSliceViewProto ToProto(const Shape& shape, DataType dtype,
                                      const NdSbp& nd_sbp,
                                      const Placement& placement,
                                      const std::vector<TensorSlice>& slices) {
  OFS_CHECK(static_cast<int64_t>(slices.size()) == placement.parallel_num());
  oneflow::TensorSliceViewProto proto;
  *proto.mutable_logical_shape() = ToProto(shape);
  proto.set_data_type(ToProto(dtype));
  *proto.mutable_parallel_conf() = ToProto(placement);
  *proto.mutable_nd_sbp() = ToProto(nd_sbp);
  for (int64_t id = 0; id < placement.parallel_num(); ++id) {
    oneflow::RankSliceProto* rank = proto.add_rank_slice();
    rank->set_parallel_id(id);
    rank->set_rank(placement.RankOf(id));
    for (int64_t c : placement.CoordinateOf(id)) rank->add_mesh_coordinate(c);
    for (IndexRange r : slices[id].ranges()) {
      oneflow::RangeProto* range = rank->add_range();
      range->set_begin(r.begin);
      range->set_end(r.end);
    }
    rank->set_elem_cnt(slices[id].elem_cnt());
    rank->set_is_partial(nd_sbp.any_partial());
  }
  return proto;
}

}  // namespace oneflow_sbp::io