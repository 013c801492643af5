#include "tests/models/embed_reference.h"

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "google/protobuf/struct.pb.h"
#include "google/protobuf/util/json_util.h"

namespace oneflow_sbp::testing {

std::string RunfilePath(const std::string& relative) {
  const char* srcdir = std::getenv("TEST_SRCDIR");
  const char* ws = std::getenv("TEST_WORKSPACE");
  return absl::StrCat(srcdir ? srcdir : ".", "/", ws ? ws : "oneflow_sbp", "/", relative);
}

absl::StatusOr<EmbedReference> ReadEmbedReference(const std::string& path) {
  std::ifstream in(path);
  if (!in) return absl::NotFoundError(absl::StrCat("no ", path));
  std::stringstream ss;
  ss << in.rdbuf();
  google::protobuf::Struct s;
  const std::string text = ss.str();
  if (!google::protobuf::util::JsonStringToMessage(text, &s).ok()) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": not JSON"));
  }
  EmbedReference r;
  const auto& f = s.fields();
  r.max_seq_length = static_cast<int64_t>(f.at("max_seq_length").number_value());
  for (const auto& v : f.at("sentences").list_value().values()) r.sentences.push_back(v.string_value());
  for (const auto& row : f.at("token_ids").list_value().values()) {
    std::vector<int32_t> ids;
    for (const auto& v : row.list_value().values()) ids.push_back(static_cast<int32_t>(v.number_value()));
    r.token_ids.push_back(std::move(ids));
  }
  for (const auto& row : f.at("embeddings").list_value().values()) {
    std::vector<double> e;
    for (const auto& v : row.list_value().values()) e.push_back(v.number_value());
    r.embeddings.push_back(std::move(e));
  }
  return r;
}

}  // namespace oneflow_sbp::testing
