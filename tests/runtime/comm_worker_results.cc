#include "tests/runtime/comm_worker_results.h"

#include <stdlib.h>

#include <fstream>
#include <iterator>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace oneflow_sbp::comm::testing {

void WriteWorkerResult(const std::string& dir, int rank, const absl::Status& s,
                       absl::Duration elapsed) {
  std::ofstream out(absl::StrCat(dir, "/rank", rank));
  out << static_cast<int>(s.code()) << " " << absl::ToInt64Milliseconds(elapsed) << " "
      << s.message() << "\n";
}

WorkerResult ReadWorkerResult(const std::string& dir, int rank) {
  WorkerResult r;
  std::ifstream in(absl::StrCat(dir, "/rank", rank));
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<std::string> parts = absl::StrSplit(text, absl::MaxSplits(' ', 2));
  r.present = parts.size() == 3 && absl::SimpleAtoi(parts[0], &r.code) &&
              absl::SimpleAtoi(parts[1], &r.elapsed_ms);
  if (r.present) r.message = parts[2];
  return r;
}

std::string MakeResultDir() {
  const char* base = std::getenv("TEST_TMPDIR");
  std::string tmpl = absl::StrCat(base != nullptr ? base : "/tmp", "/comm_XXXXXX");
  if (mkdtemp(tmpl.data()) == nullptr) return "";
  return tmpl;
}

}  // namespace oneflow_sbp::comm::testing
