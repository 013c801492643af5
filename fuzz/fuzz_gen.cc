#include "fuzz/fuzz_gen.h"

#include <algorithm>
#include <vector>

#include "absl/status/statusor.h"
#include "oneflow_sbp/values/check.h"

namespace oneflow_sbp::fuzz {

Shape GenShape(FuzzInput& in, int max_rank, int64_t max_dim) {
  const int rank = static_cast<int>(in.Range(0, max_rank));
  std::vector<int64_t> dims;
  for (int i = 0; i < rank; ++i) dims.push_back(in.Range(1, max_dim));
  absl::StatusOr<Shape> s = Shape::Make(dims);
  OFS_CHECK(s.ok()) << s.status();
  return *s;
}

DataType GenDataType(FuzzInput& in) {
  return static_cast<DataType>(in.Range(0, kNumDataTypes - 1));
}

Placement GenPlacement(FuzzInput& in, int max_axes, int max_extent, int64_t max_ranks) {
  const int axes = static_cast<int>(in.Range(1, max_axes));
  std::vector<int64_t> hierarchy;
  int64_t n = 1;
  for (int i = 0; i < axes; ++i) {
    const int64_t e = std::min<int64_t>(in.Range(1, max_extent), max_ranks / n);
    hierarchy.push_back(std::max<int64_t>(e, 1));
    n *= hierarchy.back();
  }
  const int64_t offset = in.Range(0, 3);
  std::vector<int64_t> ranks;
  for (int64_t r = 0; r < n; ++r) ranks.push_back(offset + r);
  if (in.Range(0, 3) == 0) std::reverse(ranks.begin(), ranks.end());
  absl::StatusOr<Placement> p = Placement::Make(DeviceType::kCpu, ranks, hierarchy);
  OFS_CHECK(p.ok()) << p.status();
  return *p;
}

NdSbp GenNdSbp(FuzzInput& in, const Placement& placement, int tensor_rank, bool allow_partial) {
  NdSbp nd;
  for (int i = 0; i < placement.num_axes(); ++i) {
    const int choice = static_cast<int>(in.Range(0, 1 + tensor_rank));
    if (choice == 0 || (choice == 1 && !allow_partial)) {
      nd.push_back(SbpParallel::Broadcast());
    } else if (choice == 1) {
      nd.push_back(SbpParallel::PartialSum());
    } else {
      nd.push_back(SbpParallel::Split(choice - 2));
    }
  }
  return nd;
}

}  // namespace oneflow_sbp::fuzz
