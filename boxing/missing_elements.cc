#include "boxing/missing_elements.h"

#include <algorithm>
#include <numeric>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/hash/hash.h"
#include "oneflow_sbp/tensor_slice_view.h"

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
      for (const IndexRange& r : ranges) {
        const int64_t size = std::max<int64_t>(r.size(), 0);
        const int64_t q = size / parts;
        const int64_t rem = size % parts;
        int64_t begin = r.begin;
        for (int64_t j = 0; j < parts; ++j) {
          const int64_t len = q + (j < rem ? 1 : 0);
          next.push_back(IndexRange{begin, begin + len});
          begin += len;
        }
      }
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

struct PairHash {
  size_t operator()(const std::pair<int64_t, int64_t>& p) const {
    return absl::HashOf(p.first, p.second);
  }
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
  // Per component, the distinct (needed, held-of-needed) element pairs over
  // its axes' coordinates; the answer is a maximum over combinations, so
  // the sets' order does not matter.
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
    absl::flat_hash_set<std::pair<int64_t, int64_t>, PairHash> seen;
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
      seen.emplace(needed, kept);
      int j = static_cast<int>(axes.size()) - 1;
      for (; j >= 0; --j) {
        if (++coord[axes[j]] < hierarchy[axes[j]]) break;
        coord[axes[j]] = 0;
      }
      if (j < 0) break;
    }
    pairs.emplace_back(seen.begin(), seen.end());
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
