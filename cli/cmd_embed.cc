#include "cli/cmd_embed.h"

#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "models/bert_encoder.h"
#include "oneflow_sbp/values/quoted_input.h"
#include "cli/cli_format.h"
#include "oneflow_sbp/values/status_macros.h"

namespace oneflow_sbp::cli {
namespace {

std::string Vector(const std::vector<float>& v, bool full) {
  std::vector<std::string> parts;
  for (size_t i = 0; i < v.size(); ++i) {
    if (!full && i == 4 && v.size() > 8) {
      parts.push_back(absl::StrCat("... ", v.size() - 8, " more ..."));
      i = v.size() - 4;
    }
    parts.push_back(absl::StrFormat(full ? "%.8g" : "%.4f", v[i]));
  }
  return absl::StrCat("[", absl::StrJoin(parts, ", "), "]");
}

std::string Seconds(const std::vector<double>& v) {
  return absl::StrJoin(v, ", ", [](std::string* out, double s) {
    absl::StrAppend(out, absl::StrFormat("%.4f", s));
  });
}

double Cosine(const std::vector<float>& a, const std::vector<float>& b) {
  double dot = 0, na = 0, nb = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    dot += double{a[i]} * b[i];
    na += double{a[i]} * a[i];
    nb += double{b[i]} * b[i];
  }
  return na > 0 && nb > 0 ? dot / std::sqrt(na * nb) : 0;
}

}  // namespace

absl::StatusOr<std::string> RunEmbed(const EmbedOptions& o, engine::Engine& engine) {
  if (o.model.empty()) {
    return absl::InvalidArgumentError(
        "--model=DIR is required (tools/fetch_model.sh prints the all-MiniLM-L6-v2 directory)");
  }
  if (o.texts.empty()) return absl::InvalidArgumentError("give at least one TEXT to embed");
  OFS_ASSIGN_OR_RETURN(OutputFormat format, ParseOutputFormat(o.format, "text|json"));
  OFS_ASSIGN_OR_RETURN(Placement placement, Placement::Parse(o.placement));
  if (placement.device_type() != DeviceType::kCpu) {
    return absl::InvalidArgumentError(absl::StrCat("--placement=", QuotedInput(o.placement),
                                                   ": sbp embed runs on cpu placements (e.g. ",
                                                   "'cpu:0-3 [2,2]')"));
  }
  OFS_ASSIGN_OR_RETURN(models::EmbedResult r, models::EmbedTexts(engine, o.model, placement,
      o.texts, o.repeat));
  int64_t tokens = 0;
  for (const auto& t : r.tokens) tokens += static_cast<int64_t>(t.size());
  if (format == OutputFormat::kJson) {
    std::vector<std::string> toks, embs, texts;
    for (const auto& t : r.tokens) toks.push_back(absl::StrCat("[", absl::StrJoin(t, ","), "]"));
    for (const auto& e : r.embeddings) embs.push_back(Vector(e, true));
    for (const std::string& t : o.texts) texts.push_back(JsonQuote(t));
    return absl::StrCat("{\"model\": ", JsonQuote(r.config.name), ", \"dim\": ",
                        r.config.hidden, ", \"placement\": ", JsonQuote(placement.ToString()),
                        ", \"texts\": [", absl::StrJoin(texts, ", "), "], \"tokens\": [",
                        absl::StrJoin(toks, ", "), "], \"embeddings\": [",
                        absl::StrJoin(embs, ", "), "], \"load_seconds\": ",
                        absl::StrFormat("%.3f", r.load_seconds), ", \"embed_seconds\": ",
                        absl::StrFormat("%.3f", r.embed_seconds), ", \"run_seconds\": [",
                        Seconds(r.run_seconds), "], \"run_cpu_seconds\": [",
                        Seconds(r.run_cpu_seconds), "], \"weight_bytes_read\": [",
                        absl::StrJoin(r.bytes_read, ", "), "]}\n");
  }
  std::string out = absl::StrFormat(
      "%s (%d layers, hidden %d, %d heads) on %s: %d texts, %d tokens\n", r.config.name,
      r.config.layers, r.config.hidden, r.config.heads, placement.ToString(),
      o.texts.size(), tokens);
  if (o.repeat > 1) {
    absl::StrAppend(&out, absl::StrFormat("%d runs after loading in %.3f s; seconds per run: %s\n",
                                          o.repeat, r.load_seconds, Seconds(r.run_seconds)));
  }
  for (size_t i = 0; i < o.texts.size(); ++i) {
    absl::StrAppend(&out, absl::StrFormat("[%d] %s (%d tokens)\n    %s\n", i, JsonQuote(o.texts[i]),
                                          r.tokens[i].size(), Vector(r.embeddings[i], false)));
  }
  if (o.texts.size() > 1) {
    absl::StrAppend(&out, "cosine similarity:\n     ");
    for (size_t j = 0; j < o.texts.size(); ++j) absl::StrAppend(&out, absl::StrFormat("%7s", absl::StrCat("[", j, "]")));
    absl::StrAppend(&out, "\n");
    for (size_t i = 0; i < o.texts.size(); ++i) {
      absl::StrAppend(&out, absl::StrFormat("%5s", absl::StrCat("[", i, "]")));
      for (size_t j = 0; j < o.texts.size(); ++j) {
        absl::StrAppend(&out, absl::StrFormat("%7.3f", Cosine(r.embeddings[i], r.embeddings[j])));
      }
      absl::StrAppend(&out, "\n");
    }
  }
  return out;
}

}  // namespace oneflow_sbp::cli
