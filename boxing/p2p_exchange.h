// Exact point-to-point exchange between any two layouts on any two
// placements: every destination rank receives exactly the index ranges it
// lacks, from ranks that hold them. The universal fallback of the planner,
// and the only move between different placements.
//
// Rules:
// * Source copies: ranks that differ only on B mesh axes hold the same
//   data; each receiver picks one of them, rotating by its own position so
//   that no single copy serves everyone.
// * Source partial sums: ranks that differ on P mesh axes hold different
//   addends; a receiver fetches every addend of its range (except the one
//   it holds itself, when it is also a source rank holding that range) and
//   sums locally.
// * A rank that is both a source and a destination (same device rank)
//   keeps what it already holds: no bytes for that part.
// * Destination partial sums: the ranks that differ only on the
//   destination's P axes (a P group) need the same region, but only their
//   SUM must equal it. Two ways to own it are priced and the cheaper kept
//   (ties: the first):
//     - root: the rank at P coordinate 0 receives the whole region, the
//       others hold zeros;
//     - split: every part of the region goes to exactly one member: parts a
//       member already holds stay with it, and every other source piece is
//       cut into balanced parts (along its first dim of extent >= 2) dealt
//       round-robin over the group, so each member receives about 1/g.
//       Groups that differ only on the destination's B axes share one
//       ownership (decided on the first of them), so B copies hold
//       identical addends.
//   E.g. f32[1024,1000] (S(0),S(0)) -> (S(1),P) on [2,3]: the busiest rank
//   receives 1,024,000 bytes as root, 342,000 split.
#ifndef BOXING_P2P_EXCHANGE_H_
#define BOXING_P2P_EXCHANGE_H_

#include "boxing/boxing_plan.h"
#include "boxing/calibration.h"
#include "boxing/collective_moves.h"

namespace oneflow_sbp::boxing {

// How a destination P group may own its region (see above).
enum class PartialOwnership : uint8_t {
  kCheaperOfRootOrSplit,
  kRootOnly,  // the rule before split ownership existed, for comparisons
};

// The step moving `from` on `src`'s placement to `to` on `dst`'s. Both
// spaces must use the same participant numbering. Without `detailed`,
// only kind, result and time are filled (no pieces, no groups, no byte
// vectors; the search's fast path).
BoxingStep PointToPointExchange(
    LayoutSpace& src, const NdSbp& from, LayoutSpace& dst, const NdSbp& to,
    const Calibration& calibration, bool detailed = true,
    PartialOwnership ownership = PartialOwnership::kCheaperOfRootOrSplit);

}  // namespace oneflow_sbp::boxing

#endif  // BOXING_P2P_EXCHANGE_H_
