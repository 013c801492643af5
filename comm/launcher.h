// Launching SPMD rank processes, torchrun style, and joining their world
// from inside a rank: both sides of one environment-variable contract.
//
// Example (the launcher side; `sbp launch` is a thin CLI over this):
//   LaunchOptions o;
//   o.nproc = 4;
//   o.timeout = absl::Minutes(10);
//   absl::StatusOr<LaunchResult> r = Launch(o, {"/path/to/worker", "--flag"});
//
// and in each worker process:
//   absl::StatusOr<std::unique_ptr<Communicator>> world =
//       ConnectFromEnvironment(absl::Seconds(60));
//
// Every rank process gets, on top of the launcher's environment:
//   RANK              global rank: node_rank * nproc + local rank
//   WORLD_SIZE        nnodes * nproc
//   LOCAL_RANK        rank on this node, 0 .. nproc-1
//   LOCAL_WORLD_SIZE  nproc
//   MASTER_ADDR       where rank 0 serves the rendezvous store
//   MASTER_PORT       its port
//   OFS_JOB_SECRET    the job secret (job_auth.h): the launcher's own
//                     OFS_JOB_SECRET if set, else a fresh random one (one
//                     node only: with several nodes every node's launcher
//                     must be given the same one). Never on a command line.
// plus LaunchOptions::env. A rank reads, besides:
//   OFS_TIMEOUT            the collective (and rendezvous) timeout in seconds
//   OFS_HEARTBEAT_TIMEOUT  seconds of silence before a peer is reported
//                          (default 10; 0 turns the heartbeat off)
//
// Failure handling: when a rank exits non-zero or dies by a signal, the
// launcher waits `failure_grace` for the others to exit on their own (they
// normally fail fast: their peers' sockets closed), then sends SIGTERM to
// those still running, and SIGKILL after `term_timeout`. The returned
// status names the first failing rank and its exit code or signal. Rank
// processes also get SIGKILL if the launching thread dies
// (PR_SET_PDEATHSIG), so a crashed launcher leaves no orphans. A rank that
// is stopped (SIGSTOP, SIGTSTP) is noticed (waitpid WUNTRACED), and the
// failure summary names it first: its peers fail because it stopped
// answering, not the other way round.
#ifndef COMM_LAUNCHER_H_
#define COMM_LAUNCHER_H_

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "absl/types/span.h"
#include "comm/communicator.h"

namespace oneflow_sbp::comm {

struct LaunchOptions {
  int nproc = 1;  // rank processes on this node
  int nnodes = 1;
  int node_rank = 0;
  std::string master_addr = "127.0.0.1";
  // 0: pick a free port on master_addr (only with nnodes == 1: other nodes
  // could not know it).
  int master_port = 0;
  // For the whole launch; then every rank is terminated and the result is
  // kDeadlineExceeded.
  absl::Duration timeout = absl::InfiniteDuration();
  // After the first failure, how long the other ranks may take to exit on
  // their own before they are terminated.
  absl::Duration failure_grace = absl::ZeroDuration();
  // Between SIGTERM and SIGKILL.
  absl::Duration term_timeout = absl::Seconds(3);
  // Extra variables for every rank, set after (and so overriding) the
  // launcher's own environment.
  std::vector<std::pair<std::string, std::string>> env;
  // Each line a rank writes to stdout or stderr goes to the launcher's,
  // prefixed "[rank N] " (N the global rank); lines are never interleaved.
  // Off: the ranks inherit the launcher's stdout and stderr.
  bool prefix_output = false;
};

// How one rank process ended.
struct RankExit {
  int rank = 0;
  int pid = 0;
  int exit_code = -1;  // set when it exited, -1 when a signal ended it
  int signal = 0;      // the signal that ended it, 0 when it exited
  bool terminated = false;  // the launcher sent it SIGTERM or SIGKILL
  int stopped_by = 0;       // the signal that last stopped it, 0 if never stopped
};

struct LaunchResult {
  int master_port = 0;
  // By local rank.
  std::vector<RankExit> ranks;
};

// Runs argv (argv[0] is a path, or a name looked up in PATH) as `nproc`
// rank processes and waits for all of them. OK with every rank's exit when
// all exited 0. Errors:
//   kInvalidArgument   bad options, empty argv, argv[0] not found, several
//                      nodes without OFS_JOB_SECRET;
//   kUnavailable       (first node) master_port is already in use on
//                      master_addr: another job's store, say; nothing started;
//   kAborted           a rank failed: "rank 2 (pid 123) exited with code
//                      3" or "... was killed by signal 6 (Aborted)"; the
//                      other ranks were terminated as described above;
//   kDeadlineExceeded  `timeout` passed; every rank was terminated;
//   kUnavailable       fork or exec failed (the message says why).
absl::StatusOr<LaunchResult> Launch(const LaunchOptions& options,
                                    absl::Span<const std::string> argv);

// In a rank process: joins the Gloo world that RANK, WORLD_SIZE,
// MASTER_ADDR, MASTER_PORT and OFS_JOB_SECRET describe (see
// gloo_communicator.h), with `timeout` for the rendezvous and as the
// default call timeout unless OFS_TIMEOUT (seconds) is set, and the
// heartbeat timeout OFS_HEARTBEAT_TIMEOUT (seconds, default 10, 0 off).
// kFailedPrecondition naming a missing variable (not started by a
// launcher); kInvalidArgument for a malformed one; rendezvous errors as
// ConnectGloo.
absl::StatusOr<std::unique_ptr<Communicator>> ConnectFromEnvironment(absl::Duration timeout);

// A duration in seconds from the environment variable `name` ("2.5"):
// `fallback` when unset or empty; kInvalidArgument when malformed or
// negative.
absl::StatusOr<absl::Duration> SecondsFromEnvironment(const char* name, absl::Duration fallback);

}  // namespace oneflow_sbp::comm

#endif  // COMM_LAUNCHER_H_
