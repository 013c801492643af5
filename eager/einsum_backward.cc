#include "eager/einsum_backward.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "eager/apply.h"
#include "eager/autograd.h"
#include "oneflow_sbp/values/status_macros.h"
#include "ops/einsum_rule.h"
#include "oneflow_sbp/values/quoted_input.h"

namespace oneflow_sbp::eager {

absl::StatusOr<std::vector<GlobalTensor>> EinsumGrad(BackwardContext& c) {
  const std::string equation = c.Attr<std::string>("equation");
  OFS_ASSIGN_OR_RETURN(const ops::EinsumSpec spec, ops::ParseEinsum(equation));
  std::vector<GlobalTensor> grads(c.num_inputs());
  const GlobalTensor& dy = c.output_grad(0);
  if (!dy.defined()) return grads;
  for (int i = 0; i < c.num_inputs(); ++i) {
    if (!c.needs_input_grad(i)) continue;
    std::string grad_eq = spec.output;
    std::string seen = spec.output;
    std::vector<GlobalTensor> operands = {dy};
    for (int j = 0; j < c.num_inputs(); ++j) {
      if (j == i) continue;
      absl::StrAppend(&grad_eq, ",", spec.inputs[j]);
      seen += spec.inputs[j];
      operands.push_back(c.input(j));
    }
    for (char letter : spec.inputs[i]) {
      if (seen.find(letter) == std::string::npos) {
        return absl::UnimplementedError(absl::StrCat(
            "einsum backward: letter '", std::string(1, letter), "' of equation ", QuotedInput(equation),
            " appears only in operand ", i, " (summed inside it); its gradient would need a "
            "broadcast back, which this rule does not do"));
      }
    }
    absl::StrAppend(&grad_eq, "->", spec.inputs[i]);
    OFS_ASSIGN_OR_RETURN(grads[i], Apply1(c.ctx(), "einsum", operands,
                                          Attrs({{"equation", AttrValue(grad_eq)}})));
  }
  return grads;
}

}  // namespace oneflow_sbp::eager
