#include "oneflow_sbp/infer_types.h"

#include "absl/hash/hash.h"

namespace oneflow_sbp {

InferInput::InferInput(TensorDesc desc, NdSbp nd_sbp)
    : desc_(std::move(desc)), nd_sbp_(nd_sbp), hash_(absl::HashOf(desc_, nd_sbp_)) {}

}  // namespace oneflow_sbp
