// Exact point-to-point exchange between any two layouts on any two
// placements: every destination rank receives exactly the index ranges it
// lacks, from ranks that hold them. The universal fallback of the planner,
// and the only move between different placements.
//
// Rules:
// * Source copies: ranks that differ only on B mesh axes hold the same
//   data; each receiver picks one of them, rotating by its own position so
//   that no single copy serves everyone (balanced candidates instead pick
//   the copy that has sent least, see below).
// * Source partial sums: ranks that differ on P mesh axes hold different
//   addends; a receiver fetches every addend of its range (except the one
//   it holds itself, when it is also a source rank holding that range) and
//   sums locally.
// * A rank that is both a source and a destination (same device rank)
//   keeps what it already holds: no bytes for that part.
// * Destination partial sums: the ranks that differ only on the
//   destination's P axes (a P group, g members) need the same region, but
//   only their SUM must equal it. Groups that differ only on the
//   destination's B axes form a class and share one ownership (member
//   position -> parts), so B copies hold identical addends. Candidates are
//   priced and the cheapest kept (ties: the earlier, so a plan changes
//   only where a later one is strictly cheaper):
//     - root: the rank at P coordinate 0 receives the whole region, the
//       others hold zeros;
//     - split: parts a member of the class's first group already holds
//       stay with it, every other source piece is cut into g balanced
//       parts (along its first dim of extent >= 2) dealt round-robin;
//     - balanced, whole: each source piece's part of the region (cut g
//       ways only where no member of the class holds it) goes to the
//       member position that leaves the lowest max load over ALL the
//       ranks it touches in every group of the class, sent and received
//       (ties: fewer bytes moved, then the lower position); then a branch
//       and bound over positions (on the max per-rank bytes, bounded below
//       by the bytes still to move shared over the class's ranks) while
//       its budget lasts;
//     - balanced, fine: the same with every piece cut g ways.
//   Balanced candidates send each transfer from the copy that has sent
//   least so far (ties: the lowest id), and are dropped past their work
//   budget (BalancedOwnershipBudget), which keeps large meshes on root and
//   split. E.g. f32[1024,1000] on [2,3]: (S(0),S(0)) -> (S(1),P): the
//   busiest rank receives 1,024,000 bytes as root, 342,000 split;
//   (S(0),S(0)) -> (B,P): 1,140,000 split (the first group's ownership
//   made the second group's ranks receive a sixth and a half), 684,000
//   balanced (position m owns rows m and 3+m: every rank receives one
//   sixth); on [2,2] 1,536,000 -> 1,024,000.
// * Without destination P every group has one member; one balanced
//   candidate (a small constant budget) differs from root only by its
//   choice of senders.
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

// Work (receiver x copy checks) one balanced ownership candidate may spend
// in one exchange (see above). Into a destination with P (on an axis of
// size > 1; two candidates): kBalancedOwnershipWorkFloor plus
// kBalancedOwnershipWorkPerPair x source ranks x destination ranks each.
// Otherwise (one candidate, choosing senders only): kBalancedSendersWork.
// Half of it may go to exact search; past the whole, the candidate is
// dropped. The planner's EstimatePlanWork counts it. Saturates.
inline constexpr int64_t kBalancedOwnershipWorkFloor = int64_t{1} << 13;
inline constexpr int64_t kBalancedOwnershipWorkPerPair = 1;
inline constexpr int64_t kBalancedSendersWork = int64_t{1} << 12;
int64_t BalancedOwnershipBudget(int64_t src_ranks, int64_t dst_ranks, bool partial_destination);

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
