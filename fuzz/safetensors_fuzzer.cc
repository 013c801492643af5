// Fuzz target: the safetensors header validator (checkpoint/safetensors.h), the
// part of a model file that is read before anything is trusted.
//
// Input: the first 8 bytes give the data region's size (little-endian,
// capped at 1 GiB: the validator never reads data); the rest is the
// header JSON. Seeds are real headers (all-MiniLM-L6-v2's, and files our
// writer made) and near misses.
// Properties: no crash, no hang; errors are never kInternal; an accepted
// header has entries sorted by offset, non-overlapping, each inside the
// data region and sized exactly shape x itemsize.
#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/strings/str_cat.h"
#include "fuzz/fuzz_check.h"
#include "fuzz/fuzz_input.h"
#include "checkpoint/safetensors.h"

namespace oneflow_sbp::fuzz {
namespace {

void FuzzOne(FuzzInput& in) {
  uint64_t data_size = 0;
  for (int i = 0; i < 8; ++i) data_size |= uint64_t{in.Byte()} << (8 * i);
  data_size %= uint64_t{1} << 30;
  const std::string json(in.Rest());
  const int64_t start = 8 + static_cast<int64_t>(json.size());
  absl::StatusOr<checkpoint::SafetensorsHeader> h =
      checkpoint::ParseSafetensorsHeader(json, start, static_cast<int64_t>(data_size), "fuzz.safetensors");
  CheckNotInternal(h.status(), "ParseSafetensorsHeader");
  if (!h.ok()) return;
  int64_t prev_end = start;
  for (const checkpoint::SafetensorsEntry& e : h->entries) {
    FUZZ_CHECK(e.begin >= prev_end, absl::StrCat("tensor '", e.name, "' overlaps or is unsorted"));
    FUZZ_CHECK(e.end <= start + static_cast<int64_t>(data_size),
               absl::StrCat("tensor '", e.name, "' ends past the data region"));
    int64_t bytes = e.itemsize;
    for (int64_t d : e.shape) {
      FUZZ_CHECK(d >= 0, absl::StrCat("tensor '", e.name, "' has a negative extent"));
      bytes *= d;
    }
    FUZZ_CHECK(e.end - e.begin == bytes, absl::StrCat("tensor '", e.name, "' is mis-sized"));
    prev_end = e.end;
  }
}

}  // namespace
}  // namespace oneflow_sbp::fuzz

OFS_FUZZ_TARGET(oneflow_sbp::fuzz::FuzzOne)
