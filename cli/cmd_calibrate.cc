#include "cli/cmd_calibrate.h"

#include <algorithm>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "boxing/calibration.h"
#include "io/calibration_io.h"
#include "oneflow_sbp/values/nd_sbp.h"
#include "cli/cli_format.h"
#include "cli/rank_runner.h"
#include "oneflow_sbp/values/status_macros.h"

namespace oneflow_sbp::cli {
namespace {

// Best (least) seconds per call of `fn` over `reps` calls, after a
// barrier; every rank calls it.
absl::StatusOr<double> Time(comm::Communicator& world, int reps,
                            const std::function<absl::Status()>& fn) {
  double best = 1e30;
  for (int i = 0; i < reps; ++i) {
    absl::Status s = world.Barrier();
    OFS_RETURN_IF_ERROR(s);
    const absl::Time start = absl::Now();
    s = fn();
    OFS_RETURN_IF_ERROR(s);
    best = std::min(best, absl::ToDoubleSeconds(absl::Now() - start));
  }
  return best;
}

struct Links {
  double collective_latency = 0;
  double collective_bandwidth = 0;
  double p2p_latency = 0;
  double p2p_bandwidth = 0;
};

// Collective step: a one-element all-reduce gives the latency; an
// all-gather of `large` bytes in all (large / n from each rank) gives the
// bandwidth of the bytes each rank receives ((n-1)/n x large). Point to point: ranks 0 and 1 ping-pong.
absl::StatusOr<Links> Measure(comm::Communicator& world, int64_t large) {
  Links links;
  const int n = world.size();
  std::vector<float> one(1, 1.0f);
  absl::StatusOr<double> t = Time(world, 50, [&] {
    return world.AllReduce(one.data(), one.data(), 1, DataType::kFloat32);
  });
  OFS_RETURN_IF_ERROR(t.status());
  links.collective_latency = *t;
  // The gathered tensor is `large` bytes in all (each rank gives 1/n of
  // it), so every rank holds O(large) and the run O(n x large); with
  // `large` per rank it was n^2 x large (64 GiB at --nproc=64).
  const int64_t elems = std::max<int64_t>(1, large / 4 / n);
  std::vector<float> mine(elems, 1.0f);
  std::vector<float> all(elems * n);
  std::vector<int64_t> counts(n, elems);
  t = Time(world, 3, [&] {
    return world.AllGatherV(mine.data(), all.data(), counts, DataType::kFloat32);
  });
  OFS_RETURN_IF_ERROR(t.status());
  const double received = static_cast<double>(elems) * 4 * (n - 1);
  links.collective_bandwidth = received / std::max(*t - links.collective_latency, 1e-9);
  if (n >= 2) {
    // Only ranks 0 and 1 ping-pong; the others need no buffer.
    std::vector<char> small(8), big(world.rank() < 2 ? large : 0);
    auto ping = [&](std::vector<char>& buf) -> absl::Status {
      if (world.rank() == 0) {
        absl::Status s = world.Send(buf.data(), static_cast<int64_t>(buf.size()), DataType::kInt8, 1);
        if (s.ok()) s = world.Recv(buf.data(), static_cast<int64_t>(buf.size()), DataType::kInt8, 1);
        return s;
      }
      if (world.rank() == 1) {
        absl::Status s = world.Recv(buf.data(), static_cast<int64_t>(buf.size()), DataType::kInt8, 0);
        if (s.ok()) s = world.Send(buf.data(), static_cast<int64_t>(buf.size()), DataType::kInt8, 0);
        return s;
      }
      return absl::OkStatus();
    };
    t = Time(world, 50, [&] { return ping(small); });
    OFS_RETURN_IF_ERROR(t.status());
    links.p2p_latency = *t / 2;
    t = Time(world, 3, [&] { return ping(big); });
    OFS_RETURN_IF_ERROR(t.status());
    links.p2p_bandwidth = static_cast<double>(large) / std::max(*t / 2 - links.p2p_latency, 1e-9);
  }
  return links;
}

}  // namespace

absl::StatusOr<std::string> RunCalibrate(const CalibrateOptions& o) {
  OFS_ASSIGN_OR_RETURN(OutputFormat format, ParseOutputFormat(o.format, "text|json|textproto"));
  OFS_ASSIGN_OR_RETURN(Backend backend, ParseBackend(o.backend));
  if (o.nproc < 2) return absl::InvalidArgumentError("--nproc must be at least 2 to measure links");
  return RunOnRanks(backend, o.nproc, [&](comm::Communicator& world) -> absl::StatusOr<std::string> {
    OFS_ASSIGN_OR_RETURN(Links links, Measure(world, o.large_bytes));
    if (world.rank() != 0) return std::string();
    boxing::Calibration c = boxing::Calibration::Defaults(NdSbp::kMaxAxes);
    for (int i = 0; i < c.num_axes(); ++i) {
      c.axis(i) = boxing::LinkSpec{links.collective_bandwidth, links.collective_latency};
    }
    c.p2p() = boxing::LinkSpec{links.p2p_bandwidth, links.p2p_latency};
    oneflow::CalibrationProto proto = io::CalibrationToProto(c);
    proto.set_backend(o.backend);
    proto.set_ranks(o.nproc);
    proto.set_note(absl::StrCat(
        "collective step: latency of a 1-element all-reduce, bandwidth of an all-gather of ",
        o.large_bytes, " B in all; p2p: ping-pong between ranks 0 and 1; every mesh axis "
        "gets the collective numbers (one machine, one kind of link)"));
    if (o.out) {
      absl::Status s = io::SaveCalibration(*o.out, proto);
      OFS_RETURN_IF_ERROR(s);
    }
    std::string text = absl::StrFormat(
        "calibrated %d ranks (%s)\n"
        "  collective step: latency %.1f us, bandwidth %.2f GB/s (defaults: 10 us, 25 GB/s)\n"
        "  point to point:  latency %.1f us, bandwidth %.2f GB/s\n",
        o.nproc, o.backend, links.collective_latency * 1e6, links.collective_bandwidth / 1e9,
        links.p2p_latency * 1e6, links.p2p_bandwidth / 1e9);
    if (o.out) absl::StrAppend(&text, "wrote ", *o.out, " (use it with --calibration=", *o.out, ")\n");
    return Render(format, proto, text);
  });
}

}  // namespace oneflow_sbp::cli
