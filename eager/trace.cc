#include "eager/trace.h"

#include <fstream>

#include "absl/strings/str_cat.h"
#include "oneflow_sbp/values/quoted_input.h"

namespace oneflow_sbp::eager {
namespace {

// Minimal JSON string escaping (op names and signatures are ASCII).
std::string Quote(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    if (static_cast<unsigned char>(c) < 0x20) {
      absl::StrAppend(&out, " ");
      continue;
    }
    out += c;
  }
  return out + "\"";
}

// Microseconds since `origin`, as Chrome wants.
double Us(absl::Time t, absl::Time origin) { return absl::ToDoubleMicroseconds(t - origin); }

}  // namespace

std::string ChromeTraceJson(absl::Span<const TraceRecorder* const> ranks) {
  absl::Time origin = absl::InfiniteFuture();
  for (const TraceRecorder* r : ranks) {
    for (const OpEvent& e : r->events()) origin = std::min(origin, e.start);
  }
  std::string out = "{\"traceEvents\":[\n";
  bool first = true;
  auto emit = [&](const std::string& event) {
    absl::StrAppend(&out, first ? "" : ",\n", event);
    first = false;
  };
  for (const TraceRecorder* r : ranks) {
    emit(absl::StrCat("{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":0,\"tid\":", r->rank(),
                      ",\"args\":{\"name\":\"rank ", r->rank(), "\"}}"));
    for (const OpEvent& e : r->events()) {
      emit(absl::StrCat(
          "{\"name\":", Quote(e.op), ",\"cat\":\"", e.backward ? "backward" : "forward",
          "\",\"ph\":\"X\",\"pid\":0,\"tid\":", r->rank(), ",\"ts\":", Us(e.start, origin),
          ",\"dur\":", absl::ToDoubleMicroseconds(e.total), ",\"args\":{\"signature\":",
          Quote(e.signature), ",\"infer_us\":", absl::ToDoubleMicroseconds(e.infer),
          ",\"boxing_us\":", absl::ToDoubleMicroseconds(e.boxing),
          ",\"kernel_us\":", absl::ToDoubleMicroseconds(e.kernel), "}}"));
      for (const BoxingEvent& b : e.boxing_steps) {
        emit(absl::StrCat(
            "{\"name\":", Quote(absl::StrCat(b.blob, " ", b.step)),
            ",\"cat\":\"boxing\",\"ph\":\"X\",\"pid\":0,\"tid\":", r->rank(),
            ",\"ts\":", Us(b.start, origin), ",\"dur\":", absl::ToDoubleMicroseconds(b.duration),
            ",\"args\":{\"planned_sent\":", b.planned_sent,
            ",\"planned_received\":", b.planned_received, ",\"sent\":", b.sent,
            ",\"received\":", b.received, "}}"));
      }
    }
  }
  absl::StrAppend(&out, "\n],\"displayTimeUnit\":\"ns\"}\n");
  return out;
}

absl::Status WriteChromeTrace(const std::string& path,
                              absl::Span<const TraceRecorder* const> ranks) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  if (!f) return absl::InvalidArgumentError(absl::StrCat("cannot write trace file ", QuotedPath(path)));
  f << ChromeTraceJson(ranks);
  f.close();
  if (!f) return absl::InvalidArgumentError(absl::StrCat("cannot write trace file ", QuotedPath(path)));
  return absl::OkStatus();
}

}  // namespace oneflow_sbp::eager
