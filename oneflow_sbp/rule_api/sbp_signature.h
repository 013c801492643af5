// SBP signatures of one op call: one SbpParallel (1-D) or NdSbp (N-D) per
// blob, indexed by the OpCall's blob order (inputs, then outputs).
//
// One-line forms (golden test strings, explain output, error messages):
//   1-D  "a_0:S(0) b_0:B -> out_0:S(0)"
//   N-D  "a_0:(S(0),B) b_0:(B,S(1)) -> out_0:(S(0),S(1))"
// An op without inputs prints "-> out_0:S(0)"; unset entries print "unset".
#ifndef ONEFLOW_SBP_RULE_API_SBP_SIGNATURE_H_
#define ONEFLOW_SBP_RULE_API_SBP_SIGNATURE_H_

#include <string>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "absl/types/span.h"
#include "oneflow_sbp/values/nd_sbp.h"
#include "oneflow_sbp/rule_api/op_call.h"
#include "oneflow_sbp/values/sbp_parallel.h"

namespace oneflow_sbp {

using SbpSignature = absl::InlinedVector<SbpParallel, 8>;
using NdSbpSignature = absl::InlinedVector<NdSbp, 6>;

// "(S(0),B)": the NdSbp form used inside signature strings (no spaces, so a
// signature splits on spaces into blobs). A 1-entry NdSbp prints bare,
// "S(0)", so 1-D signatures read as in OneFlow.
std::string CompactNdSbpString(const NdSbp& nd_sbp);

std::string SignatureToString(const OpCall& call, const SbpSignature& sig);
std::string SignatureToString(const OpCall& call, const NdSbpSignature& sig);
// Candidates joined by " | ", in list order: the golden-line form of a rule.
std::string SignatureListToString(const OpCall& call,
                                  absl::Span<const SbpSignature> list);

// The N-D signature of a 1-D one: every SBP becomes a 1-entry NdSbp.
NdSbpSignature ToNdSignature(const SbpSignature& sig);

}  // namespace oneflow_sbp

#endif  // ONEFLOW_SBP_RULE_API_SBP_SIGNATURE_H_
