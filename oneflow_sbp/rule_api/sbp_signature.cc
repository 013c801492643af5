#include "oneflow_sbp/rule_api/sbp_signature.h"

#include "absl/strings/str_cat.h"

namespace oneflow_sbp {
namespace {

template <typename Sig, typename Print>
std::string Render(const OpCall& call, const Sig& sig, Print print) {
  std::string out;
  for (int b = 0; b < call.num_blobs() && b < static_cast<int>(sig.size()); ++b) {
    if (b == call.num_inputs()) {
      out += b == 0 ? "-> " : " -> ";
    } else if (b > 0) {
      out += " ";
    }
    absl::StrAppend(&out, call.bn(b), ":", print(sig[b]));
  }
  return out;
}

}  // namespace

std::string CompactNdSbpString(const NdSbp& nd_sbp) {
  if (nd_sbp.size() == 1) return nd_sbp[0].ToString();
  return absl::StrCat("(", nd_sbp.ToLongString(), ")");
}

std::string SignatureToString(const OpCall& call, const SbpSignature& sig) {
  return Render(call, sig, [](SbpParallel s) { return s.ToString(); });
}

std::string SignatureToString(const OpCall& call, const NdSbpSignature& sig) {
  return Render(call, sig, [](const NdSbp& s) { return CompactNdSbpString(s); });
}

std::string SignatureListToString(const OpCall& call,
                                  absl::Span<const SbpSignature> list) {
  std::string out;
  for (size_t i = 0; i < list.size(); ++i) {
    if (i > 0) out += " | ";
    out += SignatureToString(call, list[i]);
  }
  return out;
}

NdSbpSignature ToNdSignature(const SbpSignature& sig) {
  NdSbpSignature nd;
  for (SbpParallel s : sig) nd.push_back(NdSbp{s});
  return nd;
}

}  // namespace oneflow_sbp
