// Every boxing plan of a fixed sweep, one line each, for checking that a
// change to the planner leaves its plans as they were:
//
//   bazel run -c opt //tools/bench:plan_dump > /tmp/before.txt
//   (change the planner)
//   bazel run -c opt //tools/bench:plan_dump > /tmp/after.txt
//   cmp /tmp/before.txt /tmp/after.txt
//
// The sweep: every ordered layout pair over {B, P, S(0) ..} on eight small
// meshes with uneven and empty slices (the line carries each step's
// per-rank bytes), and every 7th pair (97th on three axes) of a 2-D tensor
// on four large meshes with an even and an uneven shape (the line carries
// a digest of the per-rank bytes). 6,557 lines; about 15 s at -c opt.
// Not a test: the answer is "the same as before", which only the caller
// knows.
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "boxing/planner.h"

namespace oneflow_sbp {
namespace {

// Every layout of `axes` mesh axes for a tensor of `rank` dims: layout k
// is k written in base (rank + 2), the first axis its most significant
// digit, digits B, P, S(0), S(1), ...
std::vector<NdSbp> AllLayouts(int axes, int rank) {
  const int base = rank + 2;
  int64_t count = 1;
  for (int i = 0; i < axes; ++i) count *= base;
  std::vector<NdSbp> out;
  out.reserve(count);
  for (int64_t k = 0; k < count; ++k) {
    NdSbp layout = NdSbp::Repeat(SbpParallel::Broadcast(), axes);
    int64_t rest = k;
    for (int i = axes - 1; i >= 0; --i, rest /= base) {
      const int digit = static_cast<int>(rest % base);
      layout.set(i, digit == 0   ? SbpParallel::Broadcast()
                    : digit == 1 ? SbpParallel::PartialSum()
                                 : SbpParallel::Split(digit - 2));
    }
    out.push_back(layout);
  }
  return out;
}

std::string Head(const char* placement, const Shape& shape, const NdSbp& a, const NdSbp& b) {
  return absl::StrCat(placement, " ", shape.ToString(), " ", a.ToString(), "->", b.ToString());
}

int Run() {
  const boxing::Calibration cal = boxing::Calibration::Defaults(NdSbp::kMaxAxes);
  struct Small {
    const char* placement;
    Shape shape;
  };
  const Small small[] = {
      {"cpu:0-3 [2,2]", Shape{8, 6}},   {"cpu:0-3 [2,2]", Shape{3, 5}},
      {"cpu:0-5 [2,3]", Shape{7, 4}},   {"cpu:0-7 [2,2,2]", Shape{5, 3}},
      {"cpu:0-11 [3,4]", Shape{2, 9}},  {"cpu:0-5 [3,2]", Shape{1, 7, 2}},
      {"cpu:0-7 [4,2]", Shape{13, 6}},  {"cpu:0-63 [8,8]", Shape{17, 40}},
  };
  for (const Small& c : small) {
    const Placement p = *Placement::Parse(c.placement);
    const std::vector<NdSbp> layouts = AllLayouts(p.num_axes(), c.shape.rank());
    for (const NdSbp& a : layouts) {
      for (const NdSbp& b : layouts) {
        absl::StatusOr<boxing::BoxingPlan> plan =
            boxing::PlanBoxing({c.shape, DataType::kFloat32, p, a, p, b}, cal);
        const std::string head = Head(c.placement, c.shape, a, b);
        if (!plan.ok()) {
          std::printf("%s ERR %s\n", head.c_str(), std::string(plan.status().message()).c_str());
          continue;
        }
        std::string bytes;
        for (const boxing::BoxingStep& s : plan->steps) {
          for (int64_t x : s.bytes_sent) absl::StrAppend(&bytes, x, ",");
          absl::StrAppend(&bytes, "|");
          for (int64_t x : s.bytes_received) absl::StrAppend(&bytes, x, ",");
          absl::StrAppend(&bytes, ";");
        }
        std::printf("%s %s t=%.9g %s\n", head.c_str(), plan->Summary().c_str(), plan->time_s(),
                    bytes.c_str());
      }
    }
  }
  for (const char* placement : {"cpu:0-16383 [16,1024]", "cpu:0-4095 [64,64]",
                                "cpu:0-1023 [8,128]", "cpu:0-4095 [16,16,16]"}) {
    const Placement p = *Placement::Parse(placement);
    for (const Shape& shape : {Shape{16384, 4096}, Shape{1000, 3000}}) {
      const std::vector<NdSbp> layouts = AllLayouts(p.num_axes(), 2);
      int n = 0;
      for (const NdSbp& a : layouts) {
        for (const NdSbp& b : layouts) {
          if (++n % (p.num_axes() == 3 ? 97 : 7) != 0) continue;
          absl::StatusOr<boxing::BoxingPlan> plan =
              boxing::PlanBoxing({shape, DataType::kFloat32, p, a, p, b}, cal);
          const std::string head = Head(placement, shape, a, b);
          if (!plan.ok()) {
            std::printf("%s ERR %s\n", head.c_str(),
                        std::string(plan.status().message()).c_str());
            continue;
          }
          // Wrapping arithmetic on purpose: a digest, not a count.
          uint64_t digest = 0;
          for (const boxing::BoxingStep& s : plan->steps) {
            for (size_t i = 0; i < s.bytes_sent.size(); ++i) {
              digest = digest * 31 + static_cast<uint64_t>(s.bytes_sent[i]) * 7 +
                       static_cast<uint64_t>(s.bytes_received[i]);
            }
          }
          std::printf("%s %s t=%.9g h=%llu\n", head.c_str(), plan->Summary().c_str(),
                      plan->time_s(), static_cast<unsigned long long>(digest));
        }
      }
    }
  }
  return 0;
}

}  // namespace
}  // namespace oneflow_sbp

int main() { return oneflow_sbp::Run(); }
