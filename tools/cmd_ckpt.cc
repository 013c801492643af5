#include "tools/cmd_ckpt.h"

#include "absl/strings/str_cat.h"
#include "io/checkpoint.h"
#include "io/safetensors.h"

namespace oneflow_sbp::cli {

absl::StatusOr<std::string> RunCkpt(const std::vector<std::string>& args) {
  const std::string action = args.empty() ? "" : args[0];
  if (action == "inspect" && args.size() == 2) {
    absl::StatusOr<io::CheckpointIndex> index = io::ReadCheckpointIndex(args[1]);
    if (!index.ok()) return index.status();
    return io::CheckpointIndexToText(*index);
  }
  if (action == "export" && args.size() == 3) {
    absl::Status s = io::ExportCheckpoint(args[1], args[2]);
    if (!s.ok()) return s;
    absl::StatusOr<std::unique_ptr<io::SafetensorsFile>> f = io::SafetensorsFile::Open(args[2]);
    if (!f.ok()) return f.status();
    int64_t bytes = 0;
    for (const io::SafetensorsEntry& e : (*f)->entries()) bytes += e.end - e.begin;
    return absl::StrCat("wrote ", args[2], ": ", (*f)->entries().size(), " tensors, ", bytes,
                        " bytes\n");
  }
  return absl::InvalidArgumentError(
      "usage: sbp ckpt inspect DIR | sbp ckpt export DIR OUT.safetensors");
}

}  // namespace oneflow_sbp::cli
