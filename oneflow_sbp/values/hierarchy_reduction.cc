#include "oneflow_sbp/values/hierarchy_reduction.h"

#include <algorithm>
#include <utility>

#include "oneflow_sbp/values/check.h"

namespace oneflow_sbp {
namespace {

using ExtentSet = absl::InlinedVector<int64_t, 4>;

void AddExtent(ExtentSet* set, int64_t v) {
  if (std::find(set->begin(), set->end(), v) == set->end()) set->push_back(v);
}

// Per-nd_sbp bookkeeping of the walk: the extents the open split dim may
// have at the start of the current reduced axis, and for dims split
// earlier the extents they may have after that split.
struct Track {
  ExtentSet held;
  absl::InlinedVector<std::pair<int, ExtentSet>, 4> after;
  int open_dim = -1;

  const ExtentSet* After(int dim) const {
    for (const auto& [d, set] : after) {
      if (d == dim) return &set;
    }
    return nullptr;
  }
  void SetAfter(int dim, ExtentSet set) {
    for (auto& [d, s] : after) {
      if (d == dim) {
        s = std::move(set);
        return;
      }
    }
    after.emplace_back(dim, std::move(set));
  }
};

}  // namespace

bool CanMergeSplit(int64_t v, int64_t m) {
  const int64_t r = v % m;
  return r <= 1 || r == m - 1;
}

ReducedNdSbps ReduceNdSbps(absl::Span<const int64_t> hierarchy,
                           absl::Span<const NdSbp> nd_sbps, const Shape& shape) {
  ReducedNdSbps out;
  const size_t k = nd_sbps.size();
  out.nd_sbps.resize(k);
  if (hierarchy.size() == 1) {
    out.hierarchy.assign(hierarchy.begin(), hierarchy.end());
    for (size_t i = 0; i < k; ++i) {
      out.nd_sbps[i] = hierarchy[0] == 1 ? NdSbp{SbpParallel::Broadcast()} : nd_sbps[i];
    }
    return out;
  }
  // Fast path (most N-D candidates): no extent-1 axis and no two adjacent
  // axes that every nd_sbp places alike, so nothing merges or drops and the
  // walk below would return its input unchanged.
  bool identity = true;
  for (size_t d = 0; d < hierarchy.size() && identity; ++d) {
    if (hierarchy[d] == 1) identity = false;
    if (d == 0 || !identity) continue;
    bool same = true;
    for (size_t i = 0; i < k && same; ++i) same = nd_sbps[i][d] == nd_sbps[i][d - 1];
    identity = !same;
  }
  if (identity) {
    out.hierarchy.assign(hierarchy.begin(), hierarchy.end());
    for (size_t i = 0; i < k; ++i) {
      for (size_t d = 0; d < hierarchy.size(); ++d) {
        const SbpParallel s = nd_sbps[i][d];
        OFS_CHECK(!s.is_split() || s.split_axis() < shape.rank())
            << s.ToString() << " on " << shape.ToString();
      }
      out.nd_sbps[i] = nd_sbps[i];
    }
    return out;
  }
  absl::InlinedVector<Track, 2> tracks(k);
  for (size_t d = 0; d < hierarchy.size(); ++d) {
    const int64_t h = hierarchy[d];
    if (h == 1) continue;
    if (!out.hierarchy.empty()) {
      bool same = true;
      for (size_t i = 0; i < k && same; ++i) {
        same = nd_sbps[i][d] == out.nd_sbps[i][out.nd_sbps[i].size() - 1];
      }
      if (same) {
        const int64_t m = out.hierarchy.back() * h;
        bool mergeable = true;
        for (size_t i = 0; i < k && mergeable; ++i) {
          if (!nd_sbps[i][d].is_split()) continue;
          for (int64_t v : tracks[i].held) mergeable = mergeable && CanMergeSplit(v, m);
        }
        if (mergeable) {
          out.hierarchy.back() = m;
          continue;
        }
      }
    }
    for (size_t i = 0; i < k; ++i) {
      Track& t = tracks[i];
      if (t.open_dim >= 0) {
        const int64_t prev = out.hierarchy.back();
        ExtentSet after;
        for (int64_t v : t.held) {
          AddExtent(&after, v / prev);
          if (v % prev != 0) AddExtent(&after, v / prev + 1);
        }
        t.SetAfter(t.open_dim, std::move(after));
      }
      const SbpParallel s = nd_sbps[i][d];
      out.nd_sbps[i].push_back(s);
      if (s.is_split()) {
        const int a = s.split_axis();
        OFS_CHECK(a < shape.rank()) << s.ToString() << " on " << shape.ToString();
        const ExtentSet* prior = t.After(a);
        t.held = prior != nullptr ? *prior : ExtentSet{shape.dim(a)};
        t.open_dim = a;
      } else {
        t.open_dim = -1;
      }
    }
    out.hierarchy.push_back(h);
  }
  if (out.hierarchy.empty()) {
    out.hierarchy.push_back(hierarchy[0]);
    for (size_t i = 0; i < k; ++i) out.nd_sbps[i] = NdSbp{SbpParallel::Broadcast()};
  }
  return out;
}

InOutReduced InOutReduce(absl::Span<const int64_t> in_hierarchy,
                         absl::Span<const int64_t> out_hierarchy, const NdSbp& in,
                         const NdSbp& out, const Shape& shape) {
  InOutReduced r;
  const bool same_hierarchy =
      in_hierarchy.size() == out_hierarchy.size() &&
      std::equal(in_hierarchy.begin(), in_hierarchy.end(), out_hierarchy.begin());
  if (same_hierarchy) {
    const NdSbp both[2] = {in, out};
    ReducedNdSbps joint = ReduceNdSbps(in_hierarchy, both, shape);
    r.in_hierarchy = joint.hierarchy;
    r.out_hierarchy = std::move(joint.hierarchy);
    r.in = joint.nd_sbps[0];
    r.out = joint.nd_sbps[1];
    return r;
  }
  ReducedNdSbps a = ReduceNdSbps(in_hierarchy, {&in, 1}, shape);
  ReducedNdSbps b = ReduceNdSbps(out_hierarchy, {&out, 1}, shape);
  r.in_hierarchy = std::move(a.hierarchy);
  r.out_hierarchy = std::move(b.hierarchy);
  r.in = a.nd_sbps[0];
  r.out = b.nd_sbps[0];
  auto product = [](const Hierarchy& h) {
    int64_t p = 1;
    for (int64_t v : h) p *= v;
    return p;
  };
  if (r.in_hierarchy.size() + r.out_hierarchy.size() == 3 &&
      product(r.in_hierarchy) == product(r.out_hierarchy)) {
    const int64_t n = product(r.in_hierarchy);
    auto liftable = [&](SbpParallel s) {
      return !s.is_split() || CanMergeSplit(shape.dim(s.split_axis()), n);
    };
    if (r.in_hierarchy.size() == 1 && liftable(r.in[0])) {
      r.in = NdSbp{r.in[0], r.in[0]};
      r.in_hierarchy = r.out_hierarchy;
    } else if (r.out_hierarchy.size() == 1 && liftable(r.out[0])) {
      r.out = NdSbp{r.out[0], r.out[0]};
      r.out_hierarchy = r.in_hierarchy;
    }
  }
  return r;
}

}  // namespace oneflow_sbp
