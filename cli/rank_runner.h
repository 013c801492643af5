// Running one SPMD function on every rank of a world, for the `sbp`
// commands that move real data (boxing --execute, calibrate, demo):
//   threads  N ranks as threads of this process (comm::RunRanks);
//   gloo     N processes over Gloo: this process re-launches its own
//            command line as N rank processes (comm::Launch) and waits; each
//            rank process finds RANK etc. in its environment, joins the
//            world (ConnectFromEnvironment) and runs the function.
//
//   absl::StatusOr<RankRun> r = RunOnRanks(Backend::kThreads, 4, fn);
//   if (r->is_launcher) ...   // gloo parent: the ranks already printed
//
// Rank 0 reports (the function prints or returns text); the other ranks
// stay quiet. Every rank's error is collected; the first is returned.
#ifndef CLI_RANK_RUNNER_H_
#define CLI_RANK_RUNNER_H_

#include <functional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "comm/communicator.h"
#include "oneflow_sbp/values/placement.h"

namespace oneflow_sbp::cli {

enum class Backend : uint8_t { kThreads, kGloo };

// "threads" or "gloo"; anything else is kInvalidArgument.
absl::StatusOr<Backend> ParseBackend(absl::string_view text);
absl::string_view BackendName(Backend backend);

// True in a process that a launcher started as a rank: RANK and the job
// secret (OFS_JOB_SECRET) are both set. A RANK left over in a user's shell
// alone does not make a command wait for peers.
bool IsRankProcess();

struct RankRunOptions {
  // Every collective's timeout (threads) and the rendezvous and call
  // timeout (gloo). Zero: OFS_TIMEOUT (seconds; `sbp --timeout` sets it),
  // else 60 s.
  absl::Duration timeout = absl::ZeroDuration();
  // Where the ranks' payload buffers live. kCuda: threads only, every rank
  // thread on the current GPU (comm::InProcessOptions::OnDevice); needs a
  // --config=cuda build (else kUnimplemented naming it).
  DeviceType device = DeviceType::kCpu;
};

// Runs fn(world) on `nproc` ranks. Under gloo in the parent process it
// launches the ranks and returns their joint exit; in a rank process it
// joins the world and runs fn once. The returned text is rank 0's (empty
// in the gloo parent, whose children printed theirs).
absl::StatusOr<std::string> RunOnRanks(
    Backend backend, int nproc,
    const std::function<absl::StatusOr<std::string>(comm::Communicator&)>& fn,
    const RankRunOptions& options = {});

}  // namespace oneflow_sbp::cli

#endif  // CLI_RANK_RUNNER_H_
