#include "cli/cmd_ckpt.h"

#include "absl/strings/str_cat.h"
#include "checkpoint/checkpoint.h"
#include "checkpoint/safetensors.h"
#include "oneflow_sbp/values/status_macros.h"

namespace oneflow_sbp::cli {

absl::StatusOr<std::string> RunCkpt(const std::vector<std::string>& args) {
  const std::string action = args.empty() ? "" : args[0];
  if (action == "inspect" && args.size() == 2) {
    OFS_ASSIGN_OR_RETURN(checkpoint::CheckpointIndex index,
        checkpoint::ReadCheckpointIndex(args[1]));
    return checkpoint::CheckpointIndexToText(index);
  }
  if (action == "export" && args.size() == 3) {
    absl::Status s = checkpoint::ExportCheckpoint(args[1], args[2]);
    OFS_RETURN_IF_ERROR(s);
    OFS_ASSIGN_OR_RETURN(std::unique_ptr<checkpoint::SafetensorsFile> f,
        checkpoint::SafetensorsFile::Open(args[2]));
    int64_t bytes = 0;
    for (const checkpoint::SafetensorsEntry& e : f->entries()) bytes += e.end - e.begin;
    return absl::StrCat("wrote ", args[2], ": ", f->entries().size(), " tensors, ", bytes,
                        " bytes\n");
  }
  return absl::InvalidArgumentError(
      "usage: sbp ckpt inspect DIR | sbp ckpt export DIR OUT.safetensors");
}

}  // namespace oneflow_sbp::cli
