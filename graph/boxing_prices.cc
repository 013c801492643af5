#include "graph/boxing_prices.h"

#include <algorithm>
#include <atomic>
#include <limits>
#include <new>
#include <optional>
#include <string>
#include <system_error>
#include <thread>
#include <utility>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "oneflow_sbp/values/status_macros.h"

#include "graph/cost_graph.h"

namespace oneflow_sbp::graph {

namespace {

int64_t SatMul(int64_t a, int64_t b) {
  if (a == 0 || b == 0) return 0;
  return a > std::numeric_limits<int64_t>::max() / b ? std::numeric_limits<int64_t>::max()
                                                     : a * b;
}

int64_t SatAdd(int64_t a, int64_t b) {
  return b > std::numeric_limits<int64_t>::max() - a ? std::numeric_limits<int64_t>::max()
                                                     : a + b;
}

}  // namespace

int64_t BoxingPrices::PricingWork(const boxing::PlanRequest& r, bool* without_exchanges) {
  if (without_exchanges != nullptr) *without_exchanges = r.collectives_only;
  const int64_t values = r.shape.rank() + 2;
  const int axes = r.src_placement.num_axes();
  const int64_t ranks = r.src_placement.parallel_num();
  int64_t layouts = 1;
  for (int i = 0; i < axes; ++i) layouts = SatMul(layouts, values);
  const int64_t tries = SatMul((int64_t{1} << axes) - 1, values);
  const int64_t per_layout = SatMul(tries, ranks);
  // The planner searches the collectives alone when asked to (charged even
  // over its limit: it then refuses the pair, and the charge says why), and
  // where p2p exchanges put a request over its limit but the collectives
  // fit (boxing/planner.h, large meshes): charge that search, as the
  // planner bounds it try by try.
  const bool over = !r.collectives_only && boxing::EstimatePlanWork(r) > boxing::kMaxPlanWork;
  if (r.collectives_only || over) {
    const int64_t collectives = boxing::EstimateCollectiveSearchWork(r);
    if (r.collectives_only || collectives <= boxing::kMaxPlanWork) {
      if (without_exchanges != nullptr) *without_exchanges = true;
      return SatAdd(collectives, SatMul(layouts, kPairOverhead));
    }
  }
  return SatMul(layouts, SatAdd(per_layout, SatAdd(SatMul(ranks, ranks), kPairOverhead)));
}

BoxingPrices::BoxingPrices(engine::Engine& engine, Placement placement, int64_t work_budget,
                           bool collectives_only)
    : engine_(engine),
      placement_(std::move(placement)),
      work_budget_(work_budget),
      collectives_only_(collectives_only) {}

boxing::PlanRequest BoxingPrices::RequestFor(const TensorDesc& desc, const NdSbp& from,
                                             const NdSbp& to) const {
  return {desc.shape, desc.dtype, placement_, from, placement_, to, collectives_only_};
}

absl::Status BoxingPrices::Charge(const std::vector<Key>& keys, bool count) {
  int64_t work = 0;
  int64_t without_exchanges = 0;
  for (const Key& k : keys) {
    const boxing::PlanRequest r = RequestFor(k.desc, k.from, k.to);
    if (!boxing::ValidatePlanRequest(r).ok()) continue;
    bool collectives_alone = false;
    work = SatAdd(work, PricingWork(r, &collectives_alone));
    if (collectives_alone) ++without_exchanges;
  }
  const int64_t left = work_budget_ - work_spent_;
  if (work > left) {
    // What the same pairs would cost priced by collectives alone, offered
    // when it fits.
    std::string alternative;
    if (!collectives_only_) {
      int64_t collectives = 0;
      for (const Key& k : keys) {
        boxing::PlanRequest r = RequestFor(k.desc, k.from, k.to);
        if (!boxing::ValidatePlanRequest(r).ok()) continue;
        r.collectives_only = true;
        collectives = SatAdd(collectives, PricingWork(r));
      }
      if (collectives <= left) {
        alternative = absl::StrCat(", price boxing by collectives alone (--collectives_only: ~",
                                   collectives, " steps)");
      }
    }
    return absl::ResourceExhaustedError(absl::StrCat(
        "pricing the boxing of ", keys.size(), " layout pairs on ", placement_.ToString(),
        " would take ~", work, " planner steps, over the budget of ", left, " left of ",
        work_budget_, "; use fewer ranks or mesh axes (--mesh)", alternative,
        ", or raise --work_budget if the wait is worth it"));
  }
  work_spent_ += work;
  if (count) pairs_without_exchanges_ += without_exchanges;
  return absl::OkStatus();
}

absl::StatusOr<BoxingPrice> BoxingPrices::Price(const TensorDesc& desc, const NdSbp& from,
                                                const NdSbp& to) {
  if (from == to) return BoxingPrice();
  Key key{desc, from, to};
  auto it = prices_.find(key);
  if (it != prices_.end()) return it->second;
  absl::Status charged = Charge({key}, /*count=*/false);
  OFS_RETURN_IF_ERROR(charged);
  OFS_ASSIGN_OR_RETURN(BoxingPrice price, Compute(desc, from, to));
  prices_.emplace(std::move(key), price);
  return price;
}

BoxingPrices::Key BoxingPrices::Canonical(const TensorDesc& desc, const NdSbp& from,
                                          const NdSbp& to) {
  // Into partial sums the planner may split the ownership of the sum along
  // one particular dim, so renaming dims can change the price: no sharing.
  if (to.any_partial()) return Key{desc, from, to};
  const Shape& shape = desc.shape;
  // Groups of dims with equal extents, where some split names one of them.
  std::vector<std::vector<int>> groups;
  std::vector<bool> split(shape.rank(), false);
  for (const NdSbp* nd : {&from, &to}) {
    for (int i = 0; i < nd->size(); ++i) {
      if ((*nd)[i].is_split()) split[(*nd)[i].split_axis()] = true;
    }
  }
  std::vector<bool> grouped(shape.rank(), false);
  int64_t perms = 1;
  for (int d = 0; d < shape.rank(); ++d) {
    if (grouped[d]) continue;
    std::vector<int> g = {d};
    bool any_split = split[d];
    for (int e = d + 1; e < shape.rank(); ++e) {
      if (!grouped[e] && shape.dim(e) == shape.dim(d)) {
        g.push_back(e);
        grouped[e] = true;
        any_split = any_split || split[e];
      }
    }
    if (g.size() < 2 || !any_split) continue;
    for (size_t k = 2; k <= g.size(); ++k) perms *= static_cast<int64_t>(k);
    if (perms > 720) break;  // a bound on the work; fewer groups still share
    groups.push_back(std::move(g));
  }
  Key best{desc, from, to};
  if (groups.empty()) return best;
  auto apply = [](const NdSbp& nd, const std::vector<int>& perm) {
    NdSbp out = nd;
    for (int i = 0; i < nd.size(); ++i) {
      if (nd[i].is_split()) out.set(i, SbpParallel::Split(perm[nd[i].split_axis()]));
    }
    return out;
  };
  std::vector<int> perm(shape.rank());
  for (int d = 0; d < shape.rank(); ++d) perm[d] = d;
  // Every combination of one permutation per group (odometer order).
  std::vector<std::vector<int>> images;
  for (const std::vector<int>& g : groups) images.push_back(g);
  while (true) {
    for (size_t k = 0; k < groups.size(); ++k) {
      for (size_t j = 0; j < groups[k].size(); ++j) perm[groups[k][j]] = images[k][j];
    }
    const NdSbp f = apply(from, perm), t = apply(to, perm);
    if (std::make_pair(f.packed(), t.packed()) < std::make_pair(best.from.packed(), best.to.packed())) {
      best.from = f;
      best.to = t;
    }
    size_t k = 0;
    while (k < groups.size() && !std::next_permutation(images[k].begin(), images[k].end())) ++k;
    if (k == groups.size()) break;
  }
  return best;
}

absl::StatusOr<double> BoxingPrices::Time(const TensorDesc& desc, const NdSbp& from,
                                          const NdSbp& to) {
  if (from == to) return 0.0;
  Key key = Canonical(desc, from, to);
  auto it = times_.find(key);
  if (it != times_.end()) return it->second;
  absl::Status charged = Charge({key}, /*count=*/true);
  OFS_RETURN_IF_ERROR(charged);
  OFS_ASSIGN_OR_RETURN(BoxingPrice price, Compute(key.desc, key.from, key.to));
  times_.emplace(std::move(key), price.time_s);
  return price.time_s;
}

absl::Status BoxingPrices::Prefetch(const std::vector<Request>& requests, int threads) {
  std::vector<Key> todo;
  absl::flat_hash_set<Key> seen;
  for (const Request& r : requests) {
    if (r.from == r.to) continue;
    Key key = Canonical(r.desc, r.from, r.to);
    if (times_.contains(key) || seen.contains(key)) continue;
    seen.insert(key);
    todo.push_back(std::move(key));
  }
  absl::Status charged = Charge(todo, /*count=*/true);
  OFS_RETURN_IF_ERROR(charged);
  std::vector<std::optional<absl::StatusOr<BoxingPrice>>> results(todo.size());
  std::atomic<size_t> next{0};
  auto work = [&]() {
    for (size_t i = next++; i < todo.size(); i = next++) {
      try {
        results[i] = Compute(todo[i].desc, todo[i].from, todo[i].to);
      } catch (const std::bad_alloc&) {  // an exception must not leave a pool thread
        results[i] = absl::ResourceExhaustedError("out of memory pricing a boxing");
      }
    }
  };
  const int n = std::max(1, std::min<int>(threads, static_cast<int>(todo.size())));
  std::vector<std::thread> pool;
  for (int t = 1; t < n; ++t) {
    // Fewer helpers than asked for (thread or memory limits) only make the
    // prices slower: this thread takes whatever the pool does not.
    try {
      pool.emplace_back(work);
    } catch (const std::system_error&) {
      break;
    } catch (const std::bad_alloc&) {
      break;
    }
  }
  work();
  for (std::thread& t : pool) t.join();
  for (size_t i = 0; i < todo.size(); ++i) {
    if (!results[i]->ok()) return results[i]->status();
    times_.emplace(std::move(todo[i]), (*results[i])->time_s);
  }
  return absl::OkStatus();
}

absl::StatusOr<BoxingPrice> BoxingPrices::Compute(const TensorDesc& desc, const NdSbp& from,
                                                  const NdSbp& to) const {
  absl::StatusOr<std::shared_ptr<const boxing::BoxingPlan>> plan =
      engine_.Plan(RequestFor(desc, from, to));
  BoxingPrice price;
  if (plan.ok()) {
    price.time_s = (*plan)->time_s();
    price.bytes = (*plan)->total_bytes();
    price.summary = (*plan)->Summary();
  } else if (plan.status().code() == absl::StatusCode::kUnimplemented) {
    price.time_s = kInfeasible;
    price.supported = false;
    price.summary = "unsupported";
  } else {
    return plan.status();
  }
  return price;
}

}  // namespace oneflow_sbp::graph
