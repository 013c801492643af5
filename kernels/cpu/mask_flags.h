// How the CPU kernels read a mask input (attention's key_padding_mask,
// masked_mean_pool's mask): one flag per local element, 1 where the
// element is nonzero (kept), 0 where it is zero, whatever the mask's
// dtype. Reading the flags once up front keeps the kernels' inner loops
// free of a dtype dispatch, and makes every dtype mean the same thing
// (bool true, integer 1 and float 1.0 all keep; -0.0 and 0 drop).
//
//   const std::vector<uint8_t> keep = NonzeroFlags(ctx.input(3));
#ifndef KERNELS_CPU_MASK_FLAGS_H_
#define KERNELS_CPU_MASK_FLAGS_H_

#include <cstdint>
#include <vector>

#include "oneflow_sbp/storage/local_tensor.h"

namespace oneflow_sbp::kernels {

// The flags of `mask`'s local elements in row-major order. `mask` must be
// a host tensor of any dtype (NaN counts as nonzero: it is not zero).
std::vector<uint8_t> NonzeroFlags(const LocalTensor& mask);

}  // namespace oneflow_sbp::kernels

#endif  // KERNELS_CPU_MASK_FLAGS_H_
