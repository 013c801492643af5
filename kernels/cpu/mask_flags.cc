#include "kernels/cpu/mask_flags.h"

#include "oneflow_sbp/storage/element_type.h"

namespace oneflow_sbp::kernels {

std::vector<uint8_t> NonzeroFlags(const LocalTensor& mask) {
  std::vector<uint8_t> keep(mask.elem_cnt());
  VisitDataType(mask.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* m = mask.data<T>();
    // Compared in the compute type: Eigen's halves have no operator!= on 0.
    for (size_t i = 0; i < keep.size(); ++i) {
      keep[i] = static_cast<ComputeType<T>>(m[i]) != ComputeType<T>(0) ? 1 : 0;
    }
  });
  return keep;
}

}  // namespace oneflow_sbp::kernels
