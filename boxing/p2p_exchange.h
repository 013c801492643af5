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
// * Destination partial sums: on the destination's P axes, the rank at
//   coordinate 0 receives the full value and the others hold zeros.
// * A rank that is both a source and a destination (same device rank)
//   keeps what it already holds: no bytes for that part.
#ifndef BOXING_P2P_EXCHANGE_H_
#define BOXING_P2P_EXCHANGE_H_

#include "boxing/boxing_plan.h"
#include "boxing/calibration.h"
#include "boxing/collective_moves.h"

namespace oneflow_sbp::boxing {

// The step moving `from` on `src`'s placement to `to` on `dst`'s. Both
// spaces must use the same participant numbering.
// Without `detailed`, only kind, result and time are filled.
BoxingStep PointToPointExchange(LayoutSpace& src, const NdSbp& from, LayoutSpace& dst,
                                const NdSbp& to, const Calibration& calibration,
                                bool detailed = true);

}  // namespace oneflow_sbp::boxing

#endif  // BOXING_P2P_EXCHANGE_H_
