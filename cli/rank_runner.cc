#include "cli/rank_runner.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <mutex>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "comm/inprocess_world.h"
#include "comm/job_auth.h"
#include "comm/launcher.h"
#include "oneflow_sbp/values/quoted_input.h"
#include "oneflow_sbp/values/status_macros.h"

namespace oneflow_sbp::cli {
namespace {

// This process's own command line, to re-launch it as rank processes.
absl::StatusOr<std::vector<std::string>> OwnCommandLine() {
  std::ifstream f("/proc/self/cmdline", std::ios::binary);
  if (!f) return absl::UnavailableError("cannot read /proc/self/cmdline");
  std::string all((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  std::vector<std::string> args = absl::StrSplit(all, '\0', absl::SkipEmpty());
  if (args.empty()) return absl::UnavailableError("empty /proc/self/cmdline");
  char exe[4096];
  const ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
  if (n > 0) args[0] = std::string(exe, static_cast<size_t>(n));
  return args;
}

}  // namespace

absl::StatusOr<Backend> ParseBackend(absl::string_view text) {
  if (text == "threads") return Backend::kThreads;
  if (text == "gloo") return Backend::kGloo;
  return absl::InvalidArgumentError(
      absl::StrCat("unknown backend ", QuotedInput(text), ": expected threads or gloo"));
}

absl::string_view BackendName(Backend backend) {
  return backend == Backend::kThreads ? "threads" : "gloo";
}

bool IsRankProcess() {
  const char* secret = std::getenv(comm::kJobSecretVariable);
  return std::getenv("RANK") != nullptr && secret != nullptr && *secret != '\0';
}

absl::StatusOr<std::string> RunOnRanks(
    Backend backend, int nproc,
    const std::function<absl::StatusOr<std::string>(comm::Communicator&)>& fn,
    const RankRunOptions& options) {
  if (nproc < 1) {
    return absl::InvalidArgumentError(absl::StrCat("--nproc=", nproc, " must be at least 1"));
  }
  absl::Duration timeout = options.timeout;
  if (timeout <= absl::ZeroDuration()) {
    OFS_ASSIGN_OR_RETURN(absl::Duration from_env, comm::SecondsFromEnvironment("OFS_TIMEOUT",
        absl::Seconds(60)));
    if (from_env <= absl::ZeroDuration()) {
      return absl::InvalidArgumentError("OFS_TIMEOUT must be above 0 seconds");
    }
    timeout = from_env;
  }
  if (backend == Backend::kGloo && options.device != DeviceType::kCpu) {
    return absl::UnimplementedError(absl::StrCat(
        "--execute=gloo moves host memory only; ", DeviceTypeName(options.device),
        " placements run on --execute=threads (rank threads sharing one device)"));
  }
  if (backend == Backend::kThreads) {
    std::string text;
    comm::InProcessOptions io = comm::InProcessOptions::OnDevice(options.device);
    io.default_timeout = timeout;
    absl::StatusOr<std::vector<absl::Status>> ran = comm::RunRanks(
        nproc,
        [&](comm::Communicator& world) -> absl::Status {
          OFS_ASSIGN_OR_RETURN(std::string out, fn(world));
          if (world.rank() == 0) text = std::move(out);
          return absl::OkStatus();
        },
        io);
    OFS_RETURN_IF_ERROR(ran.status());
    // The first failure caused the others (they report kAborted).
    for (const absl::Status& s : *ran) {
      if (!s.ok() && s.code() != absl::StatusCode::kAborted) return s;
    }
    for (const absl::Status& s : *ran) {
      OFS_RETURN_IF_ERROR(s);
    }
    return text;
  }
  if (IsRankProcess()) {
    OFS_ASSIGN_OR_RETURN(std::unique_ptr<comm::Communicator> world,
         comm::ConnectFromEnvironment(timeout));
    if (world->size() != nproc) {
      return absl::InvalidArgumentError(absl::StrCat("WORLD_SIZE ", world->size(),
                                                     " but --nproc=", nproc));
    }
    OFS_ASSIGN_OR_RETURN(std::string out, fn(*world));
    return world->rank() == 0 ? std::move(out) : std::string();
  }
  OFS_ASSIGN_OR_RETURN(std::vector<std::string> argv, OwnCommandLine());
  comm::LaunchOptions lo;
  lo.nproc = nproc;
  lo.timeout = timeout + absl::Seconds(30);
  lo.failure_grace = absl::Seconds(2);
  // The ranks use this process's timeout, whatever it came from.
  lo.env = {{"OFS_TIMEOUT", absl::StrCat(absl::ToDoubleSeconds(timeout))}};
  OFS_ASSIGN_OR_RETURN(comm::LaunchResult launched, comm::Launch(lo, argv));
  return std::string();
}

}  // namespace oneflow_sbp::cli
