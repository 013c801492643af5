#include "io/calibration_io.h"

#include <cerrno>
#include <cstring>
#include <fstream>

#include "absl/strings/str_cat.h"
#include "io/proto_io.h"
#include "oneflow_sbp/values/nd_sbp.h"
#include "oneflow_sbp/values/quoted_input.h"
#include "oneflow_sbp/values/status_macros.h"

namespace oneflow_sbp::io {
namespace {

absl::StatusOr<boxing::LinkSpec> LinkFromProto(const oneflow::LinkSpecProto& p, const std::string& what) {
  boxing::LinkSpec l;
  if (p.has_bandwidth_bytes_per_s()) l.bandwidth_bytes_per_s = p.bandwidth_bytes_per_s();
  if (p.has_latency_s()) l.latency_s = p.latency_s();
  if (!(l.bandwidth_bytes_per_s > 0) || !(l.latency_s >= 0)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "calibration ", what, ": bandwidth_bytes_per_s ", l.bandwidth_bytes_per_s,
        " and latency_s ", l.latency_s, " must be > 0 and >= 0"));
  }
  return l;
}

}  // namespace

absl::StatusOr<boxing::Calibration> CalibrationFromProto(const oneflow::CalibrationProto& proto) {
  if (proto.axis_size() > NdSbp::kMaxAxes) {
    return absl::InvalidArgumentError(absl::StrCat("calibration lists ", proto.axis_size(),
                                                   " mesh axes; at most ", NdSbp::kMaxAxes));
  }
  boxing::Calibration c = boxing::Calibration::Defaults(NdSbp::kMaxAxes);
  for (int i = 0; i < proto.axis_size(); ++i) {
    OFS_ASSIGN_OR_RETURN(boxing::LinkSpec l, LinkFromProto(proto.axis(i), absl::StrCat("axis ",
        i)));
    c.axis(i) = l;
  }
  if (proto.has_p2p()) {
    OFS_ASSIGN_OR_RETURN(boxing::LinkSpec l, LinkFromProto(proto.p2p(), "p2p"));
    c.p2p() = l;
  }
  if (proto.has_compute_flops_per_s()) c.set_compute_flops_per_s(proto.compute_flops_per_s());
  if (proto.has_memory_bytes_per_s()) c.set_memory_bytes_per_s(proto.memory_bytes_per_s());
  if (!(c.compute_flops_per_s() > 0) || !(c.memory_bytes_per_s() > 0)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "calibration: compute_flops_per_s ", c.compute_flops_per_s(), " and memory_bytes_per_s ",
        c.memory_bytes_per_s(), " must be > 0"));
  }
  return c;
}

oneflow::CalibrationProto CalibrationToProto(const boxing::Calibration& calibration) {
  oneflow::CalibrationProto p;
  for (int i = 0; i < calibration.num_axes(); ++i) {
    oneflow::LinkSpecProto* a = p.add_axis();
    a->set_bandwidth_bytes_per_s(calibration.axis(i).bandwidth_bytes_per_s);
    a->set_latency_s(calibration.axis(i).latency_s);
  }
  p.mutable_p2p()->set_bandwidth_bytes_per_s(calibration.p2p().bandwidth_bytes_per_s);
  p.mutable_p2p()->set_latency_s(calibration.p2p().latency_s);
  p.set_compute_flops_per_s(calibration.compute_flops_per_s());
  p.set_memory_bytes_per_s(calibration.memory_bytes_per_s());
  return p;
}

absl::StatusOr<boxing::Calibration> ParseCalibration(absl::string_view text, absl::string_view what) {
  oneflow::CalibrationProto proto;
  absl::Status s = io::FromTextProto(text, &proto);
  if (!s.ok()) return absl::InvalidArgumentError(absl::StrCat(what, ": ", s.message()));
  absl::StatusOr<boxing::Calibration> c = CalibrationFromProto(proto);
  if (!c.ok()) return absl::InvalidArgumentError(absl::StrCat(what, ": ", c.status().message()));
  return c;
}

absl::StatusOr<boxing::Calibration> LoadCalibration(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return absl::InvalidArgumentError(absl::StrCat("cannot read calibration file ", QuotedPath(path)));
  std::string text(kMaxCalibrationBytes + 1, '\0');
  f.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<size_t>(f.gcount()));
  if (text.size() > kMaxCalibrationBytes) {
    return absl::ResourceExhaustedError(absl::StrCat("calibration file ", QuotedPath(path),
                                                     " is larger than ", kMaxCalibrationBytes,
                                                     " bytes; is it the right file?"));
  }
  return ParseCalibration(text, absl::StrCat("calibration file ", QuotedPath(path)));
}

absl::Status SaveCalibration(const std::string& path, const oneflow::CalibrationProto& proto) {
  // Written, flushed and closed before the verdict: a full disk (or
  // /dev/full) shows only when the buffer reaches the file.
  errno = 0;
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  if (f) f << io::ToTextProto(proto);
  if (f) f.close();
  if (!f) {
    return absl::InvalidArgumentError(absl::StrCat("cannot write calibration file ",
                                                   QuotedPath(path), ": ",
                                                   errno != 0 ? std::strerror(errno) : "I/O error"));
  }
  return absl::OkStatus();
}

}  // namespace oneflow_sbp::io