#include "boxing/calibration.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace oneflow_sbp::boxing {

Calibration Calibration::Defaults(int num_axes) {
  Calibration c;
  c.axes_.assign(num_axes, LinkSpec{kDefaultBandwidth, kDefaultLatency});
  c.p2p_ = LinkSpec{kDefaultBandwidth, kDefaultLatency};
  return c;
}

double Calibration::StepTime(MeshAxisMask axes, int64_t max_rank_bytes) const {
  if (max_rank_bytes == 0) return 0;
  double bandwidth = 0;
  double latency = 0;
  for (int i = 0; i < num_axes(); ++i) {
    if (!(axes & AxisBit(i))) continue;
    bandwidth = bandwidth == 0 ? axes_[i].bandwidth_bytes_per_s
                               : std::min(bandwidth, axes_[i].bandwidth_bytes_per_s);
    latency = std::max(latency, axes_[i].latency_s);
  }
  if (bandwidth == 0) return P2pTime(max_rank_bytes);
  return latency + static_cast<double>(max_rank_bytes) / bandwidth;
}

double Calibration::P2pTime(int64_t max_rank_bytes) const {
  if (max_rank_bytes == 0) return 0;
  return p2p_.latency_s + static_cast<double>(max_rank_bytes) / p2p_.bandwidth_bytes_per_s;
}

double Calibration::MaxBandwidth() const {
  double b = p2p_.bandwidth_bytes_per_s;
  for (const LinkSpec& l : axes_) b = std::max(b, l.bandwidth_bytes_per_s);
  return b;
}

double Calibration::MinLatency() const {
  double l = p2p_.latency_s;
  for (const LinkSpec& a : axes_) l = std::min(l, a.latency_s);
  return l;
}

// Hex-float ("%a") is exact: two calibrations print alike iff every
// number is bit-for-bit equal (decimal with 6 digits made 25e9 and
// 25.00001e9 look the same).
std::string Calibration::Fingerprint() const {
  std::string out;
  for (const LinkSpec& l : axes_) {
    absl::StrAppendFormat(&out, "%a/%a;", l.bandwidth_bytes_per_s, l.latency_s);
  }
  absl::StrAppendFormat(&out, "p2p:%a/%a", p2p_.bandwidth_bytes_per_s, p2p_.latency_s);
  absl::StrAppendFormat(&out, ";compute:%a/%a", compute_flops_per_s_, memory_bytes_per_s_);
  return out;
}

}  // namespace oneflow_sbp::boxing
