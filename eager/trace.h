// TraceRecorder: what every op call of an eager program did on one rank:
// the op, the chosen signature, each boxing step with its planned and
// measured bytes, and times. WriteChromeTrace turns the records of all
// ranks into the Chrome trace-event format, so Perfetto
// (ui.perfetto.dev) or chrome://tracing shows one timeline per rank.
//
//   ctx.trace().events();                       // this rank's records
//   WriteChromeTrace("trace.json", {&rank0.trace(), &rank1.trace()});
#ifndef EAGER_TRACE_H_
#define EAGER_TRACE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "absl/types/span.h"

namespace oneflow_sbp::eager {

// One boxing step of one input (or of an explicit Redistribute).
struct BoxingEvent {
  std::string blob;      // "a_0", or "redistribute"
  std::string step;      // "all_gather[1] S(0)->B"
  int64_t planned_sent = 0;
  int64_t planned_received = 0;
  int64_t sent = 0;
  int64_t received = 0;
  absl::Time start;
  absl::Duration duration;
};

struct OpEvent {
  std::string op;         // "matmul", or "redistribute"
  std::string signature;  // "a_0:(S(0),B) b_0:(B,S(1)) -> out_0:(S(0),S(1))"
  bool backward = false;  // recorded while Backward ran
  absl::Time start;
  absl::Duration infer;   // inference (usually a cache hit)
  absl::Duration boxing;  // every boxing step of the inputs
  absl::Duration kernel;
  absl::Duration total;
  std::vector<BoxingEvent> boxing_steps;
};

class TraceRecorder {
 public:
  explicit TraceRecorder(int64_t rank = 0) : rank_(rank) {}
  int64_t rank() const { return rank_; }
  void set_rank(int64_t rank) { rank_ = rank; }
  void Add(OpEvent event) { events_.push_back(std::move(event)); }
  const std::vector<OpEvent>& events() const { return events_; }
  void Clear() { events_.clear(); }

 private:
  int64_t rank_;
  std::vector<OpEvent> events_;
};

// The Chrome trace-event JSON of every recorder (one "thread" per rank; op
// spans with the boxing steps nested inside, bytes in their args).
std::string ChromeTraceJson(absl::Span<const TraceRecorder* const> ranks);
// Writes ChromeTraceJson to `path`; kInvalidArgument naming the path if it
// cannot be written.
absl::Status WriteChromeTrace(const std::string& path,
                              absl::Span<const TraceRecorder* const> ranks);

}  // namespace oneflow_sbp::eager

#endif  // EAGER_TRACE_H_
