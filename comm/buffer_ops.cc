#include "comm/buffer_ops.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "oneflow_sbp/values/status_macros.h"

namespace oneflow_sbp::comm {

absl::StatusOr<BufferOps> BufferOps::For(DeviceType device) {
  if (device == DeviceType::kCpu) return BufferOps();
  absl::StatusOr<DeviceOps*> ops = GetDeviceOps(device);
  if (!ops.ok()) {
    return absl::Status(ops.status().code(),
                        absl::StrCat("collectives on ", DeviceTypeName(device),
                                     " buffers: ", ops.status().message()));
  }
  return BufferOps(*ops);
}

BufferOps BufferOps::Through(DeviceOps* ops) { return BufferOps(ops); }

std::string BufferOps::ToString() const {
  if (ops_ == nullptr) return "host memory";
  return absl::StrCat(DeviceTypeName(ops_->device()), " memory (through DeviceOps)");
}

absl::Status BufferOps::DeviceCopy(void* dst, Memory to, const void* src, Memory from,
                                   int64_t bytes) const {
  const CopyDirection dir = from == Memory::kHost ? CopyDirection::kHostToDevice
                            : to == Memory::kHost ? CopyDirection::kDeviceToHost
                                                  : CopyDirection::kSameDevice;
  return ops_->Copy(dst, src, bytes, dir);
}

absl::Status BufferOps::DeviceReduce(ReduceOp op, DataType dtype, const void* in, void* inout,
                                     int64_t count) const {
  if (count <= 0) return absl::OkStatus();
  if (op == ReduceOp::kSum) {
    // A 1-D box: inout[0, count) += in[0, count), on the device.
    StridedBox box;
    box.rank = 1;
    box.ext[0] = count;
    box.src_stride[0] = box.dst_stride[0] = 1;
    absl::Status s = ops_->CopyBox(dtype, box, in, inout, /*add=*/true);
    if (s.code() != absl::StatusCode::kUnimplemented) return s;
  }
  // Max, min, and sums the device lacks: reduce a host copy with the
  // host's ReduceInto (the same semantics bit for bit), copy it back.
  const int64_t bytes = count * ByteSizeOf(dtype);
  std::vector<char> acc(static_cast<size_t>(bytes));
  absl::Status s = ops_->Copy(acc.data(), inout, bytes, CopyDirection::kDeviceToHost);
  OFS_RETURN_IF_ERROR(s);
  if (in == inout) {
    ReduceInto(op, dtype, acc.data(), acc.data(), count);
  } else {
    std::vector<char> addend(static_cast<size_t>(bytes));
    s = ops_->Copy(addend.data(), in, bytes, CopyDirection::kDeviceToHost);
    OFS_RETURN_IF_ERROR(s);
    ReduceInto(op, dtype, addend.data(), acc.data(), count);
  }
  return ops_->Copy(inout, acc.data(), bytes, CopyDirection::kHostToDevice);
}

absl::Status BufferOps::DeviceReduceTo(ReduceOp op, DataType dtype, const void* a, const void* b,
                                      void* out, int64_t count) const {
  if (out == a) return DeviceReduce(op, dtype, b, out, count);
  // Through a scratch copy of `a`, so that `out` may also be `b`.
  const int64_t bytes = count * ByteSizeOf(dtype);
  OFS_ASSIGN_OR_RETURN(Staging tmp, Allocate(bytes));
  absl::Status s = Copy(tmp.data(), a, bytes);
  if (s.ok()) s = DeviceReduce(op, dtype, b, tmp.data(), count);
  if (s.ok()) s = Copy(out, tmp.data(), bytes);
  return s;
}

absl::StatusOr<BufferOps::Staging> BufferOps::Allocate(int64_t bytes) const {
  Staging s;
  if (ops_ == nullptr) {
    s.host_.reset(new char[static_cast<size_t>(bytes)]);
    return s;
  }
  OFS_ASSIGN_OR_RETURN(void* p, ops_->Allocate(bytes));
  s.ops_ = ops_;
  s.device_ = p;
  s.bytes_ = bytes;
  return s;
}

BufferOps::Staging& BufferOps::Staging::operator=(Staging&& o) noexcept {
  if (this == &o) return *this;
  if (ops_ != nullptr && device_ != nullptr) ops_->Free(device_, bytes_);
  host_ = std::move(o.host_);
  ops_ = std::exchange(o.ops_, nullptr);
  device_ = std::exchange(o.device_, nullptr);
  bytes_ = std::exchange(o.bytes_, 0);
  return *this;
}

BufferOps::Staging::~Staging() {
  if (ops_ != nullptr && device_ != nullptr) ops_->Free(device_, bytes_);
}

}  // namespace oneflow_sbp::comm
