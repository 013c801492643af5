// BufferOps: every touch of collective payload memory (copies, reductions,
// staging buffers, stream ordering) in the ring collectives and the
// in-process transport, so the same algorithms run on host buffers and on
// device buffers.
//
// Example (a device world's transport and collectives):
//   absl::StatusOr<BufferOps> ops = BufferOps::For(DeviceType::kCuda);
//   if (!ops.ok()) return ops.status();   // no backend: names --config=cuda
//   OFS_RETURN_IF_ERROR(ops->Reduce(ReduceOp::kSum, DataType::kFloat32, in, acc, n));
//
// Two kinds:
//   * host (BufferOps(), the default): memcpy, ReduceInto and
//     std::vector staging, inline; the CPU worlds' fast path, unchanged.
//   * through DeviceOps (For(device), or Through(ops)): copies, sums
//     (CopyBox add over a 1-D box), staging (Allocate/Free) and ordering
//     (Synchronize) go to the device backend. Max and min, and sums the
//     backend lacks (CUDA i8/u8), are reduced on the host through two
//     staged copies: slow but exact, and rare in boxing (which only sums).
//     Through(GetDeviceOps(kCpu)) runs this path on host memory, so the
//     CPU tests cover it.
//
// Memory of a pointer: "world" memory is the world's payload memory (the
// device for a device world); "host" memory is plain host memory (small
// metadata such as barrier tokens) whatever the world. Copy takes both
// sides' kinds.
//
// Ordering (CUDA): a rank thread's work runs on its own stream. Before a
// rank exposes its buffers to another thread it calls Synchronize (its
// earlier kernels finish); a thread that copies for a peer calls
// Synchronize after the copy, before it signals completion.
#ifndef COMM_BUFFER_OPS_H_
#define COMM_BUFFER_OPS_H_

#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "comm/reduce_op.h"
#include "oneflow_sbp/values/data_type.h"
#include "oneflow_sbp/storage/device_ops.h"
#include "oneflow_sbp/values/placement.h"

namespace oneflow_sbp::comm {

// Where one side of a copy lives.
enum class Memory : uint8_t {
  kWorld,  // the world's payload memory (host for host worlds)
  kHost,   // plain host memory in any world
};

class BufferOps {
 public:
  // Host buffers: plain memcpy and ReduceInto.
  BufferOps() = default;
  // Buffers of `device`: host for kCpu, else that device's DeviceOps;
  // kUnimplemented naming the build option when no backend is linked.
  static absl::StatusOr<BufferOps> For(DeviceType device);
  // Buffers handled by `ops` (not owned; lives for the program), even for
  // kCpu: the seam's device path on host memory, for tests.
  static BufferOps Through(DeviceOps* ops);

  // True for the plain host path (no DeviceOps).
  bool host() const { return ops_ == nullptr; }
  // True when `p` is world memory (always for the host path).
  bool Holds(const void* p) const { return ops_ == nullptr || ops_->Holds(p); }
  // The device of world memory.
  DeviceType device() const { return ops_ == nullptr ? DeviceType::kCpu : ops_->device(); }
  // "host memory" or "cuda memory (through DeviceOps)".
  std::string ToString() const;

  // Copies `bytes` from src (memory `from`) to dst (memory `to`). dst and
  // src either do not overlap or are equal (then nothing is copied).
  absl::Status Copy(void* dst, Memory to, const void* src, Memory from, int64_t bytes) const {
    if (bytes <= 0 || dst == src) return absl::OkStatus();
    if (ops_ == nullptr || (to == Memory::kHost && from == Memory::kHost)) {
      std::memcpy(dst, src, static_cast<size_t>(bytes));
      return absl::OkStatus();
    }
    return DeviceCopy(dst, to, src, from, bytes);
  }
  // World memory to world memory.
  absl::Status Copy(void* dst, const void* src, int64_t bytes) const {
    return Copy(dst, Memory::kWorld, src, Memory::kWorld, bytes);
  }

  // inout[i] = op(inout[i], in[i]) over world memory (reduce_op.h
  // semantics); `in` and `inout` do not overlap or are the same pointer.
  absl::Status Reduce(ReduceOp op, DataType dtype, const void* in, void* inout,
                      int64_t count) const {
    if (ops_ == nullptr) {
      ReduceInto(op, dtype, in, inout, count);
      return absl::OkStatus();
    }
    return DeviceReduce(op, dtype, in, inout, count);
  }

  // out[i] = op(a[i], b[i]) over world memory (reduce_op.h ReduceTo): out
  // may be a or b or overlap neither.
  absl::Status ReduceTo(ReduceOp op, DataType dtype, const void* a, const void* b, void* out,
                        int64_t count) const {
    if (ops_ == nullptr) {
      comm::ReduceTo(op, dtype, a, b, out, count);
      return absl::OkStatus();
    }
    return DeviceReduceTo(op, dtype, a, b, out, count);
  }

  // Waits for this thread's earlier work on world memory (no-op on host).
  absl::Status Synchronize() const {
    return ops_ == nullptr ? absl::OkStatus() : ops_->Synchronize();
  }

  // A scratch buffer of world memory, freed when it goes.
  class Staging {
   public:
    Staging() = default;
    Staging(Staging&& o) noexcept { *this = std::move(o); }
    Staging& operator=(Staging&& o) noexcept;
    Staging(const Staging&) = delete;
    Staging& operator=(const Staging&) = delete;
    ~Staging();

    char* data() { return ops_ == nullptr ? host_.get() : static_cast<char*>(device_); }

   private:
    friend class BufferOps;
    // Not zero-filled: every staged byte is written before it is read, and
    // filling tens of MiB per collective call cost as much as the copy.
    std::unique_ptr<char[]> host_;
    DeviceOps* ops_ = nullptr;
    void* device_ = nullptr;
    int64_t bytes_ = 0;
  };
  absl::StatusOr<Staging> Allocate(int64_t bytes) const;

 private:
  explicit BufferOps(DeviceOps* ops) : ops_(ops) {}
  absl::Status DeviceCopy(void* dst, Memory to, const void* src, Memory from,
                          int64_t bytes) const;
  absl::Status DeviceReduce(ReduceOp op, DataType dtype, const void* in, void* inout,
                            int64_t count) const;
  absl::Status DeviceReduceTo(ReduceOp op, DataType dtype, const void* a, const void* b,
                              void* out, int64_t count) const;

  DeviceOps* ops_ = nullptr;
};

}  // namespace oneflow_sbp::comm

#endif  // COMM_BUFFER_OPS_H_
