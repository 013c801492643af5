// The extended partial rules: where an op passes or makes P(max) / P(min).
//
// OneFlow has only partial sums, so these candidates are not OneFlow's:
// they are attached with OpDefBuilder::SetExtendedSbpFn and offered only
// under policies that ask for them (`planned`), after the OneFlow list.
//
// Which ops qualify, and why:
// * reduce_max (reduce_min) over a split dim: each rank's max of its slice
//   is a candidate whose max is the answer: S(reduced) -> P(max). A P(max)
//   input reduces the same way: P(max) -> P(max).
// * A nondecreasing elementwise f commutes with max and min:
//   f(max(a, b)) = max(f(a), f(b)). relu, tanh, sigmoid, exp, erf, floor,
//   ceil, round, softplus, identity, copy keep P(max) and P(min); negative
//   (nonincreasing) swaps them. log, sqrt and rsqrt are nondecreasing too
//   but not defined everywhere, and a candidate below the value may leave
//   their domain: no candidate. Ops that are neither (square, abs, gelu,
//   silu, sin, ...) refuse every P(max)/P(min).
// * scalar_add keeps; scalar_mul and scalar_div by a positive operand
//   keep, by a negative one swap; dividing by 0 has no candidate.
// * broadcast_add: max(a_r) + b = max(a_r + b) when b is B: (P(k), B) and
//   (B, P(k)) -> P(k). broadcast_sub: a - b keeps a's kind and swaps b's.
// * broadcast_maximum: max of two P(max) (or of P(max) and B) is P(max);
//   broadcast_minimum likewise with P(min). Max distributes over min
//   (max(b, min_r a_r) = min_r max(b, a_r)), so the maximum of B and P(min)
//   is P(min), and the minimum of B and P(max) is P(max).
// * Ops that only move values (transpose, reshape, flatten, squeeze,
//   expand_dims, expand, narrow, slice, split, cat, stack) keep each kind:
//   every output element is one input element. A B input is a valid
//   P(max) and P(min) (the max of equal values is the value), so cat and
//   stack of P(k) with B are P(k) too.
#ifndef OPS_EXTENDED_PARTIALS_H_
#define OPS_EXTENDED_PARTIALS_H_

#include "oneflow_sbp/rule_api/op_def.h"
#include "oneflow_sbp/values/sbp_parallel.h"

namespace oneflow_sbp::ops {

// P(max) for kMax, P(min) for kMin; sums are not extended.
PartialKind Swapped(PartialKind kind);

// Unary (one input, one output) ops: nondecreasing keeps each kind,
// otherwise (nonincreasing) swaps it.
GetSbpFn MonotoneUnaryPartials(bool nondecreasing);

// scalar_add / scalar_mul / scalar_div by the op's scalar operand.
GetSbpFn ScalarPartials(bool multiplicative);

// broadcast_add (subtract = false) and broadcast_sub (true).
GetSbpFn AddSubPartials(bool subtract);

// broadcast_maximum (kMax) and broadcast_minimum (kMin).
GetSbpFn ExtremumPartials(PartialKind kind);

// The value-moving ops above: all inputs P(k) -> all outputs P(k), and,
// with several inputs, one input P(k) and the others B -> P(k).
GetSbpFn MovePartials();

// reduce_max (kMax) and reduce_min (kMin), inputs "input_tensor", output
// "output_tensor", attribute "axis".
GetSbpFn ReduceExtremumPartials(PartialKind kind);

}  // namespace oneflow_sbp::ops

#endif  // OPS_EXTENDED_PARTIALS_H_
