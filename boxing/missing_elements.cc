#include "boxing/missing_elements.h"

#include <algorithm>
#include <numeric>
#include <utility>
#include <vector>

#include "oneflow_sbp/values/tensor_slice_view.h"

namespace oneflow_sbp::boxing {
namespace {

// The ranges of one dim in one layout, for every coordinate of the axes
// splitting it (first axis slowest), cut level by level without a
// division per range.
struct DimRanges {
  std::vector<int> axes;
  std::vector<int64_t> strides;
  std::vector<IndexRange> ranges;

  DimRanges(int64_t extent, int d, const NdSbp& layout, absl::Span<const int64_t> hierarchy) {
    ranges.push_back(IndexRange{0, extent});
    std::vector<IndexRange> next;
    for (int i = 0; i < layout.size(); ++i) {
      if (!layout[i].is_split() || layout[i].split_axis() != d) continue;
      axes.push_back(i);
      const int64_t parts = hierarchy[i];
      next.clear();
      next.reserve(ranges.size() * parts);
      for (const IndexRange& r : ranges) AppendBalancedParts(r, parts, &next);
      ranges.swap(next);
    }
    strides.assign(axes.size(), 1);
    for (int j = static_cast<int>(axes.size()) - 2; j >= 0; --j) {
      strides[j] = strides[j + 1] * hierarchy[axes[j + 1]];
    }
  }

  IndexRange At(const std::vector<int64_t>& coord) const {
    int64_t index = 0;
    for (size_t j = 0; j < axes.size(); ++j) index += coord[axes[j]] * strides[j];
    return ranges[index];
  }
};

int Find(std::vector<int>& parent, int x) {
  while (parent[x] != x) x = parent[x] = parent[parent[x]];
  return x;
}

// The (needed, kept) pairs of a component that can give the maximum:
// needed - kept over a product of components grows with each needed and
// falls with each kept, so a pair with no more needed and no less kept
// than another is never the maximum's. Balanced splits leave one or two.
class ParetoFront {
 public:
  void Add(int64_t needed, int64_t kept) {
    for (const auto& [n, k] : front_) {
      if (n >= needed && k <= kept) return;  // dominated (or equal)
    }
    front_.erase(std::remove_if(front_.begin(), front_.end(),
                                [&](const std::pair<int64_t, int64_t>& p) {
                                  return p.first <= needed && p.second >= kept;
                                }),
                 front_.end());
    front_.emplace_back(needed, kept);
  }
  const std::vector<std::pair<int64_t, int64_t>>& pairs() const { return front_; }

 private:
  std::vector<std::pair<int64_t, int64_t>> front_;
};

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
  std::vector<DimRanges> held_ranges;
  std::vector<DimRanges> need_ranges;
  for (int d = 0; d < rank; ++d) {
    held_ranges.emplace_back(shape.dim(d), d, held, hierarchy);
    need_ranges.emplace_back(shape.dim(d), d, need, hierarchy);
  }
  // Per component, the (needed, held-of-needed) element pairs over its
  // axes' coordinates that can give the maximum (ParetoFront); the answer
  // is a maximum over combinations, so the fronts' order does not matter.
  std::vector<std::vector<std::pair<int64_t, int64_t>>> pairs;
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
    ParetoFront front;
    std::fill(coord.begin(), coord.end(), 0);
    while (true) {
      int64_t needed = 1;
      int64_t kept = 1;
      for (int d : dims) {
        const IndexRange n = need_ranges[d].At(coord);
        const IndexRange h = held_ranges[d].At(coord);
        needed *= std::max<int64_t>(n.size(), 0);
        kept *= std::max<int64_t>(std::min(n.end, h.end) - std::max(n.begin, h.begin), 0);
      }
      front.Add(needed, kept);
      int j = static_cast<int>(axes.size()) - 1;
      for (; j >= 0; --j) {
        if (++coord[axes[j]] < hierarchy[axes[j]]) break;
        coord[axes[j]] = 0;
      }
      if (j < 0) break;
    }
    pairs.push_back(front.pairs());
  }
  // Every combination of the components' pairs occurs at some rank (their
  // axes are disjoint).
  int64_t worst = 0;
  std::vector<size_t> pick(pairs.size(), 0);
  while (true) {
    int64_t needed = 1;
    int64_t kept = 1;
    for (size_t c = 0; c < pairs.size(); ++c) {
      needed *= pairs[c][pick[c]].first;
      kept *= pairs[c][pick[c]].second;
    }
    worst = std::max(worst, needed - kept);
    int c = static_cast<int>(pairs.size()) - 1;
    for (; c >= 0; --c) {
      if (++pick[c] < pairs[c].size()) break;
      pick[c] = 0;
    }
    if (c < 0) return worst;
  }
}

}  // namespace oneflow_sbp::boxing
