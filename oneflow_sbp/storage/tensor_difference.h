// How far two host tensors (or lists of them) are apart, relative to the
// second: what `sbp demo`, `sbp plan --execute` and their tests report when
// they compare a distributed run with a reference.
#ifndef ONEFLOW_SBP_STORAGE_TENSOR_DIFFERENCE_H_
#define ONEFLOW_SBP_STORAGE_TENSOR_DIFFERENCE_H_

#include "absl/types/span.h"
#include "oneflow_sbp/storage/local_tensor.h"

namespace oneflow_sbp {

// max |a - b| over every element of every tensor, divided by
// max(scale_floor, max |b|). The floor keeps near-zero references from
// turning rounding into huge relative errors. Infinity when the lists, or
// any pair of tensors, differ in element count. Host tensors only.
double MaxRelativeDifference(absl::Span<const LocalTensor> a, absl::Span<const LocalTensor> b,
                             double scale_floor);

}  // namespace oneflow_sbp

#endif  // ONEFLOW_SBP_STORAGE_TENSOR_DIFFERENCE_H_
