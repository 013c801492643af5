#include "oneflow_sbp/storage/tensor_difference.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace oneflow_sbp {

double MaxRelativeDifference(absl::Span<const LocalTensor> a, absl::Span<const LocalTensor> b,
                             double scale_floor) {
  if (a.size() != b.size()) return INFINITY;
  double diff = 0;
  double scale = scale_floor;
  for (size_t o = 0; o < a.size(); ++o) {
    const std::vector<double> x = a[o].ToDoubles();
    const std::vector<double> y = b[o].ToDoubles();
    if (x.size() != y.size()) return INFINITY;
    for (size_t i = 0; i < x.size(); ++i) {
      diff = std::max(diff, std::fabs(x[i] - y[i]));
      scale = std::max(scale, std::fabs(y[i]));
    }
  }
  return diff / scale;
}

}  // namespace oneflow_sbp
