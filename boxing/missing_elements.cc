#include "boxing/missing_elements.h"

#include <algorithm>
#include <numeric>
#include <utility>
#include <vector>

#include "absl/container/btree_set.h"
#include "oneflow_sbp/tensor_slice_view.h"

namespace oneflow_sbp::boxing {
namespace {

// Dim d's range of `layout` at mesh coordinate `coord` (only the axes
// splitting d are read).
IndexRange RangeOf(int64_t extent, int d, const NdSbp& layout,
                   absl::Span<const int64_t> hierarchy, absl::Span<const int64_t> coord) {
  IndexRange r{0, extent};
  for (int i = 0; i < layout.size(); ++i) {
    if (layout[i].is_split() && layout[i].split_axis() == d) {
      r = BalancedPart(r, hierarchy[i], coord[i]);
    }
  }
  return r;
}

int Find(std::vector<int>& parent, int x) {
  while (parent[x] != x) x = parent[x] = parent[parent[x]];
  return x;
}

}  // namespace

int64_t MaxMissingElements(const Shape& shape, absl::Span<const int64_t> hierarchy,
                           const NdSbp& held, const NdSbp& need) {
  const int rank = shape.rank();
  const int n_axes = static_cast<int>(hierarchy.size());
  // Components: dims joined by an axis that splits one in `held` and the
  // other in `need`.
  std::vector<int> parent(rank);
  std::iota(parent.begin(), parent.end(), 0);
  for (int i = 0; i < n_axes; ++i) {
    if (held[i].is_split() && need[i].is_split()) {
      parent[Find(parent, held[i].split_axis())] = Find(parent, need[i].split_axis());
    }
  }
  // Per component, the distinct (needed, held-of-needed) element pairs over
  // its axes' coordinates. Ordered sets: nothing depends on hash order.
  std::vector<absl::btree_set<std::pair<int64_t, int64_t>>> pairs;
  std::vector<int64_t> coord(n_axes, 0);
  for (int root = 0; root < rank; ++root) {
    if (Find(parent, root) != root) continue;
    std::vector<int> dims;
    for (int d = 0; d < rank; ++d) {
      if (Find(parent, d) == root) dims.push_back(d);
    }
    std::vector<int> axes;
    for (int i = 0; i < n_axes; ++i) {
      for (const NdSbp* layout : {&held, &need}) {
        const SbpParallel s = (*layout)[i];
        if (s.is_split() && Find(parent, s.split_axis()) == root &&
            (axes.empty() || axes.back() != i)) {
          axes.push_back(i);
        }
      }
    }
    absl::btree_set<std::pair<int64_t, int64_t>> seen;
    std::fill(coord.begin(), coord.end(), 0);
    while (true) {
      int64_t needed = 1;
      int64_t kept = 1;
      for (int d : dims) {
        const IndexRange n = RangeOf(shape.dim(d), d, need, hierarchy, coord);
        const IndexRange h = RangeOf(shape.dim(d), d, held, hierarchy, coord);
        needed *= std::max<int64_t>(n.size(), 0);
        kept *= std::max<int64_t>(std::min(n.end, h.end) - std::max(n.begin, h.begin), 0);
      }
      seen.emplace(needed, kept);
      int j = static_cast<int>(axes.size()) - 1;
      for (; j >= 0; --j) {
        if (++coord[axes[j]] < hierarchy[axes[j]]) break;
        coord[axes[j]] = 0;
      }
      if (j < 0) break;
    }
    pairs.push_back(std::move(seen));
  }
  // Every combination of the components' pairs occurs at some rank (their
  // axes are disjoint).
  int64_t worst = 0;
  std::vector<absl::btree_set<std::pair<int64_t, int64_t>>::const_iterator> pick;
  for (const auto& p : pairs) pick.push_back(p.begin());
  while (true) {
    int64_t needed = 1;
    int64_t kept = 1;
    for (const auto& it : pick) {
      needed *= it->first;
      kept *= it->second;
    }
    worst = std::max(worst, needed - kept);
    int c = static_cast<int>(pairs.size()) - 1;
    for (; c >= 0; --c) {
      if (++pick[c] != pairs[c].end()) break;
      pick[c] = pairs[c].begin();
    }
    if (c < 0) return worst;
  }
}

}  // namespace oneflow_sbp::boxing
