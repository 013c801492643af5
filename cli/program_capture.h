// A recorded eager program (eager/program_recorder.h) as the
// ProgramProto that `sbp plan --program` reads (docs/PLANNING.md).
#ifndef CLI_PROGRAM_CAPTURE_H_
#define CLI_PROGRAM_CAPTURE_H_

#include <string>

#include "absl/status/status.h"
#include "eager/program_recorder.h"
#include "proto/program.pb.h"

namespace oneflow_sbp::cli {

// Parameters are free tensors unless `mark_parameters` (then they keep the
// layouts they had, as marked inputs flagged "parameter"); other leaves
// are marked inputs; `output` (a recorded tensor name) is the program's
// output, the loss of the training step the program asks for
// ("training": true).
oneflow::ProgramProto RecordedProgramToProto(const eager::ProgramRecorder& recorder,
                                             bool mark_parameters, const std::string& output);

// Writes the program as JSON; kInvalidArgument naming the path on failure.
absl::Status WriteProgram(const std::string& path, const oneflow::ProgramProto& program);

}  // namespace oneflow_sbp::cli

#endif  // CLI_PROGRAM_CAPTURE_H_
