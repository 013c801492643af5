// Fuzz target: `sbp plan --program` bodies (proto/program.proto's
// ProgramProto as JSON) through the reader the tool uses,
// io/program_proto.h's ProgramFromJson, with the builtin ops.
//
// Input: byte 0 picks a --mesh override (none, [4], [2,4], [2,2,2], or one
// over the rank limit); the rest is the program JSON.
// Properties: no crash; errors are never kInternal; reading is
// deterministic (the same outcome twice); a program read has consistent
// ids: every op input and output is a tensor, every activation's producer
// is the op listing it, every use points back at the op input reading it.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "fuzz/fuzz_check.h"
#include "fuzz/fuzz_input.h"
#include "graph/program.h"
#include "io/program_proto.h"
#include "ops/builtin_ops.h"

namespace oneflow_sbp::fuzz {
namespace {

std::string Outcome(const absl::StatusOr<graph::Program>& p) {
  if (!p.ok()) return p.status().ToString();
  return absl::StrCat(p->placement().ToString(), " ", p->tensors().size(), " tensors ",
                      p->ops().size(), " ops ", p->outputs().size(), " outputs");
}

void CheckConsistent(const graph::Program& p) {
  const int tensors = static_cast<int>(p.tensors().size());
  for (int i = 0; i < static_cast<int>(p.ops().size()); ++i) {
    const graph::ProgramOp& op = p.ops()[i];
    FUZZ_CHECK(op.call != nullptr, absl::StrCat("op ", i, " has no call"));
    for (int t : op.inputs) FUZZ_CHECK(t >= 0 && t < tensors, absl::StrCat("op ", i, " input ", t));
    for (int t : op.outputs) {
      FUZZ_CHECK(t >= 0 && t < tensors, absl::StrCat("op ", i, " output ", t));
      FUZZ_CHECK(p.tensors()[t].producer == i, absl::StrCat("tensor ", t, " producer"));
    }
  }
  for (int t = 0; t < tensors; ++t) {
    const graph::ProgramTensor& tensor = p.tensors()[t];
    FUZZ_CHECK(p.FindTensor(tensor.name) == t, absl::StrCat("tensor ", t, " name lookup"));
    for (const graph::TensorUse& u : tensor.uses) {
      FUZZ_CHECK(u.op >= 0 && u.op < static_cast<int>(p.ops().size()) &&
                     u.blob < static_cast<int>(p.ops()[u.op].inputs.size()) &&
                     p.ops()[u.op].inputs[u.blob] == t,
                 absl::StrCat("tensor ", t, " use"));
    }
  }
  for (const graph::ProgramOutput& o : p.outputs()) {
    FUZZ_CHECK(o.tensor >= 0 && o.tensor < tensors, "output id");
  }
}

void FuzzOne(FuzzInput& in) {
  static const std::vector<std::vector<int64_t>> kMeshes = {
      {}, {4}, {2, 4}, {2, 2, 2}, {65536, 2}};
  const std::vector<int64_t>& mesh = kMeshes[in.Byte() % kMeshes.size()];
  const std::string json(in.Rest());
  const absl::StatusOr<graph::Program> first =
      io::ProgramFromJson(json, ops::BuiltinOpRegistry(), mesh);
  CheckNotInternal(first.status(), "ProgramFromJson");
  if (first.ok()) CheckConsistent(*first);
  const absl::StatusOr<graph::Program> second =
      io::ProgramFromJson(json, ops::BuiltinOpRegistry(), mesh);
  FUZZ_CHECK(Outcome(first) == Outcome(second),
             absl::StrCat("two reads disagree:\n", Outcome(first), "\n---\n", Outcome(second)));
}

}  // namespace
}  // namespace oneflow_sbp::fuzz

OFS_FUZZ_TARGET(oneflow_sbp::fuzz::FuzzOne)
