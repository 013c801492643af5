#include "ops/op_util.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "oneflow_sbp/values/status_macros.h"

namespace oneflow_sbp::ops {

absl::StatusOr<int> NormalizeAxis(int64_t axis, int rank, absl::string_view what) {
  if (axis < -rank || axis >= std::max(rank, 1)) {
    return absl::InvalidArgumentError(absl::StrCat(
        what, " ", axis, " is out of range for rank ", rank, " (valid: ", -rank,
        " .. ", std::max(rank - 1, 0), ")"));
  }
  return static_cast<int>(axis < 0 ? axis + rank : axis);
}

absl::StatusOr<std::vector<int>> NormalizeAxes(const std::vector<int64_t>& axes,
                                               int rank, absl::string_view what) {
  std::vector<int> out;
  for (int64_t a : axes) {
    OFS_ASSIGN_OR_RETURN(int n, NormalizeAxis(a, rank, what));
    if (std::find(out.begin(), out.end(), n) != out.end()) {
      return absl::InvalidArgumentError(absl::StrCat(
          what, " [", absl::StrJoin(axes, ","), "] names axis ", n, " twice"));
    }
    out.push_back(n);
  }
  std::sort(out.begin(), out.end());
  return out;
}

absl::StatusOr<Shape> BroadcastShapes(const Shape& a, absl::string_view a_name,
                                      const Shape& b, absl::string_view b_name) {
  const int rank = std::max(a.rank(), b.rank());
  std::vector<int64_t> dims(rank);
  for (int i = 0; i < rank; ++i) {
    const int ia = i - (rank - a.rank());
    const int ib = i - (rank - b.rank());
    const int64_t da = ia >= 0 ? a.dim(ia) : 1;
    const int64_t db = ib >= 0 ? b.dim(ib) : 1;
    if (da != db && da != 1 && db != 1) {
      return absl::InvalidArgumentError(absl::StrCat(
          a_name, " ", a.ToString(), " and ", b_name, " ", b.ToString(),
          " do not broadcast: dim ", i, " of the result would be ", da, " vs ", db));
    }
    dims[i] = std::max(da, db);
  }
  return Shape::Make(dims);
}

absl::Status CheckSameDtype(const TensorDesc& a, absl::string_view a_name,
                            const TensorDesc& b, absl::string_view b_name) {
  if (a.dtype == b.dtype) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(a_name, " is ", a.ToString(), " but ",
                                                 b_name, " is ", b.ToString(),
                                                 "; dtypes must match"));
}

absl::Status CheckRank(const TensorDesc& desc, absl::string_view name, int rank,
                       bool at_least) {
  if (desc.shape.rank() == rank || (at_least && desc.shape.rank() > rank)) {
    return absl::OkStatus();
  }
  return absl::InvalidArgumentError(absl::StrCat(name, " ", desc.ToString(),
                                                 " must have rank ",
                                                 at_least ? ">= " : "", rank));
}

absl::StatusOr<int> NormalizeAxisOf(int64_t axis, const TensorDesc& desc, absl::string_view bn,
                                    absl::string_view attr) {
  absl::StatusOr<int> a =
      NormalizeAxis(axis, desc.shape.rank(), absl::StrCat("attribute ", attr));
  if (!a.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat(bn, " ", desc.ToString(), ": ", a.status().message()));
  }
  return a;
}

absl::Status CheckFloatingDtype(const TensorDesc& desc, absl::string_view bn) {
  const DataType t = desc.dtype;
  if (t == DataType::kFloat16 || t == DataType::kBFloat16 || t == DataType::kFloat32 ||
      t == DataType::kFloat64) {
    return absl::OkStatus();
  }
  return absl::InvalidArgumentError(
      absl::StrCat(bn, " ", desc.ToString(), " must have a floating-point dtype"));
}

absl::Status CheckIndexDtype(const TensorDesc& desc, absl::string_view bn,
                             absl::string_view what) {
  if (desc.dtype == DataType::kInt32 || desc.dtype == DataType::kInt64) {
    return absl::OkStatus();
  }
  return absl::InvalidArgumentError(absl::StrCat(bn, " is ", desc.ToString(),
                                                 " but must be an integer ", what,
                                                 " tensor (i32 or i64)"));
}

std::string FirstBlob(absl::string_view arg) { return absl::StrCat(arg, "_0"); }

Shape SubShape(const Shape& s, int begin, int end) {
  return *Shape::Make(s.dims().subspan(begin, end - begin));
}

absl::Status CheckSameDesc(const TensorDesc& a, absl::string_view an, const TensorDesc& b,
                           absl::string_view bn) {
  if (a == b) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(an, " is ", a.ToString(), " but ", bn, " is ",
                                                 b.ToString(),
                                                 "; they must have the same shape and dtype"));
}

absl::StatusOr<Shape> MakeShape(const std::vector<int64_t>& dims, absl::string_view what) {
  absl::StatusOr<Shape> s = Shape::Make(dims);
  if (!s.ok()) return absl::InvalidArgumentError(absl::StrCat(what, ": ", s.status().message()));
  return s;
}

absl::Status RegisterAll(OpRegistry* registry, const std::vector<OpDefBuilder>& builders) {
  for (const OpDefBuilder& b : builders) {
    absl::Status s = registry->Register(b);
    OFS_RETURN_IF_ERROR(s);
  }
  return absl::OkStatus();
}

}  // namespace oneflow_sbp::ops
