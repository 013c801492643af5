// Calibration of the cost model: per mesh axis, the bandwidth a rank can
// send (and receive) at and the fixed latency of one collective; and per
// rank, the compute rate and memory bandwidth that price an op's local work
// (graph-level selection, graph/, weighs boxing against it).
//
// Example:
//   Calibration c = Calibration::Defaults(2);      // a 2-axis mesh
//   c.axis(1).bandwidth_bytes_per_s = 300e9;       // NVLink inside a node
//   double t = c.StepTime(AxisBit(1), /*max_rank_bytes=*/1 << 20);
//
// Defaults (until a measurement replaces them): every mesh axis and
// point-to-point exchanges at 25 GB/s with 10 us latency, which is the
// order of magnitude of one InfiniBand HDR link and of NCCL's per-call
// overhead. Plan cost = sum over steps of latency + max over ranks of
// bytes / bandwidth. Compute: 100 GFLOP/s and 50 GB/s of memory bandwidth
// per rank, the order of one multi-core CPU socket with AVX2 (a GPU is
// 100x more on both; set them from a measurement).
#ifndef BOXING_CALIBRATION_H_
#define BOXING_CALIBRATION_H_

#include <cstdint>
#include <string>
#include <vector>

#include "oneflow_sbp/values/placement.h"

namespace oneflow_sbp::boxing {

struct LinkSpec {
  double bandwidth_bytes_per_s = 25e9;
  double latency_s = 10e-6;
};

class Calibration {
 public:
  static constexpr double kDefaultBandwidth = 25e9;
  static constexpr double kDefaultLatency = 10e-6;
  static constexpr double kDefaultComputeFlops = 100e9;
  static constexpr double kDefaultMemoryBandwidth = 50e9;

  // `num_axes` mesh axes, all at the defaults; p2p at the defaults.
  static Calibration Defaults(int num_axes);

  LinkSpec& axis(int i) { return axes_[i]; }
  const LinkSpec& axis(int i) const { return axes_[i]; }
  LinkSpec& p2p() { return p2p_; }
  const LinkSpec& p2p() const { return p2p_; }
  int num_axes() const { return static_cast<int>(axes_.size()); }

  // Per rank: floating-point operations per second of matmul-class ops,
  // and bytes per second an op reads and writes its local shards at.
  // Both must be > 0 (the Engine checks).
  double compute_flops_per_s() const { return compute_flops_per_s_; }
  double memory_bytes_per_s() const { return memory_bytes_per_s_; }
  void set_compute_flops_per_s(double v) { compute_flops_per_s_ = v; }
  void set_memory_bytes_per_s(double v) { memory_bytes_per_s_ = v; }
  // Seconds for `flops` operations / `bytes` of memory traffic on one rank.
  double ComputeTime(double flops) const { return flops / compute_flops_per_s_; }
  double MemoryTime(double bytes) const { return bytes / memory_bytes_per_s_; }

  // A collective spanning `axes` runs at the slowest of them: the minimum
  // bandwidth and the maximum latency. No bytes: no latency either (a
  // local step costs nothing).
  double StepTime(MeshAxisMask axes, int64_t max_rank_bytes) const;
  double P2pTime(int64_t max_rank_bytes) const;
  // The fastest bandwidth anywhere (for admissible lower bounds).
  double MaxBandwidth() const;
  double MinLatency() const;

  // Exact text form of every number (hex-float), for cache keys.
  std::string Fingerprint() const;

  friend bool operator==(const Calibration& a, const Calibration& b) {
    return a.Fingerprint() == b.Fingerprint();
  }

 private:
  std::vector<LinkSpec> axes_;
  LinkSpec p2p_;
  double compute_flops_per_s_ = kDefaultComputeFlops;
  double memory_bytes_per_s_ = kDefaultMemoryBandwidth;
};

}  // namespace oneflow_sbp::boxing

#endif  // BOXING_CALIBRATION_H_
