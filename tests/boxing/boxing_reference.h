// An independent reference for the boxing planner's plans into partial
// destinations: the cheapest plan of up to `max_steps` of the planner's own
// collective moves, optionally followed by one point-to-point exchange whose
// ownership of destination partial sums is searched exhaustively.
//
//   ReferenceMemo memo;  // one per (shape, placement): exchanges are reused
//   ReferenceAnswer ref = ReferenceBest(request, cal, /*max_steps=*/3,
//                                       kNoNodeCap, &memo);
//   EXPECT_LE(plan.time_s(), ref.time_s * (1 + 1e-12));
//
// Used by Planner.NeverWorseThanExhaustiveOwnership (tests/boxing/boxing_planner_test.cc,
// a sample) and by boxing_ownership_sweep_test (every pair on [2,2,2]).
#ifndef TESTS_BOXING_BOXING_REFERENCE_H_
#define TESTS_BOXING_BOXING_REFERENCE_H_

#include <cstdint>
#include <limits>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "boxing/calibration.h"
#include "boxing/planner.h"
#include "oneflow_sbp/values/nd_sbp.h"

namespace oneflow_sbp::boxing::reference {

// Every layout over {B, P, S(0) .. S(rank - 1)} on `axes` mesh axes, the
// first axis varying slowest and each axis in the order B, P, S(0), ...
std::vector<NdSbp> AllLayouts(int axes, int rank);

// No cap on the exchange search's nodes: the answer is its optimum.
inline constexpr int64_t kNoNodeCap = std::numeric_limits<int64_t>::max();

// One reference exchange from a layout to the destination.
struct ReferenceExchangeResult {
  double time_s = 0;      // Calibration::P2pTime of the busiest rank's bytes
  int64_t max_rank_bytes = 0;
  int64_t nodes = 0;      // search nodes visited
  bool capped = false;    // the search stopped at the node cap: time_s is a
                          // legal exchange's, not necessarily the optimum
};

// Reference exchanges by (from, to) layout strings, reused across requests
// that share a shape, dtype and placement (the caller keeps one per such
// triple).
using ReferenceMemo = std::map<std::pair<std::string, std::string>, ReferenceExchangeResult>;

struct ReferenceAnswer {
  double time_s = 0;        // the cheapest reference plan
  // Some exchange compared for this request was capped (the answer is a
  // legal plan's time, possibly above the reference optimum).
  bool any_capped = false;
  // The cheapest plan ends in a capped exchange.
  bool best_capped = false;
  int64_t max_nodes = 0;    // the most nodes any compared exchange visited
};

// The cheapest plan of up to `max_steps` collective moves
// (boxing/collective_moves.h, on the request's source placement, which must
// equal its destination placement) optionally followed by one reference
// point-to-point exchange into `r.dst`. The exchange model: every source
// piece (ranks with the same addend and slice) overlapping a destination P
// group's region is cut into g balanced parts along its first dim of
// extent >= 2 (g = the group's size); each part is owned by one member
// position, the same position in every group of the class (groups that
// differ only on the destination's B axes hold identical addends); each
// receiver not holding a part gets it from any of the part's copies. Branch
// and bound on the max bytes any rank sends or receives, at most
// `node_cap` nodes per exchange (kNoNodeCap: exhaustive).
ReferenceAnswer ReferenceBest(const PlanRequest& r, const Calibration& cal, int max_steps,
                              int64_t node_cap, ReferenceMemo* memo);

// Whether ReferenceBest(..., max_steps, ...) models `plan`'s shape: up to
// `max_steps` collective moves, then at most one p2p exchange, last. (The
// planner may also find longer plans, or a p2p exchange followed by more
// moves, which the reference does not price.)
bool InReferenceSpace(const BoxingPlan& plan, int max_steps);

}  // namespace oneflow_sbp::boxing::reference

#endif  // TESTS_BOXING_BOXING_REFERENCE_H_
