#include "cli/cmd_tour.h"

#include "absl/strings/str_cat.h"
#include "cli/cmd_infer.h"
#include "cli/cmd_parse.h"
#include "cli/cmd_slices.h"
#include "oneflow_sbp/values/status_macros.h"

namespace oneflow_sbp::cli {
namespace {

// Appends "$ sbp <args>" and the command's output, or fails.
absl::Status Step(std::string* out, const std::string& title, const std::string& command,
                  const absl::StatusOr<std::string>& result) {
  if (!result.ok()) {
    return absl::InternalError(absl::StrCat("tour step '", title, "' failed: ",
                                            result.status().message()));
  }
  absl::StrAppend(out, "== ", title, "\n$ sbp ", command, "\n", *result, "\n");
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::string> RunTour(engine::Engine& engine) {
  std::string out;
  {
    ParseOptions o;
    o.positional = {"(S(0),B)", "cuda:0-7 [2,4]"};
    absl::Status s = Step(&out, "1. Layouts: an nd_sbp has one SBP per mesh axis",
                          "parse '(S(0),B)' 'cuda:0-7 [2,4]'", RunParse(o));
    OFS_RETURN_IF_ERROR(s);
  }
  {
    SlicesOptions o;
    o.shape = "11,6";
    o.placement = "cpu:0-5 [2,3]";
    o.nd_sbp = "(S(0),S(0))";
    absl::Status s = Step(&out,
                          "2. Uneven splits are exact: 11 rows over 2 then 3 parts",
                          "slices --shape=11,6 --placement='cpu:0-5 [2,3]' "
                          "--nd_sbp='(S(0),S(0))'",
                          RunSlices(o));
    OFS_RETURN_IF_ERROR(s);
  }
  {
    InferOptions o;
    o.op = "matmul";
    o.placement = "cpu:0-3 [2,2]";
    o.inputs = {"f32[64,32]:(S(0),B)", "f32[32,48]:(B,S(1))"};
    absl::Status s = Step(&out, "3. Inference keeps inputs as produced when it can",
                          "infer --op=matmul --placement='cpu:0-3 [2,2]' "
                          "--input='f32[64,32]:(S(0),B)' --input='f32[32,48]:(B,S(1))'",
                          RunInfer(o, engine));
    OFS_RETURN_IF_ERROR(s);
  }
  {
    InferOptions o;
    o.op = "relu";
    o.placement = "cpu:0-5 [2,3]";
    o.inputs = {"f32[2,12]:(P,P)"};
    o.format = "table";
    absl::Status s = Step(&out,
                          "4. ...and otherwise pays the least copy cost (SPEC.md §3 example)",
                          "infer --op=relu --placement='cpu:0-5 [2,3]' "
                          "--input='f32[2,12]:(P,P)' --format=table",
                          RunInfer(o, engine));
    OFS_RETURN_IF_ERROR(s);
  }
  absl::StrAppend(&out, "More: sbp help, sbp ops, sbp infer ... --explain\n");
  return out;
}

}  // namespace oneflow_sbp::cli
