#include "comm/launcher.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <memory>
#include <optional>
#include <string>
#include <cstring>
#include <system_error>
#include <thread>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "comm/gloo_communicator.h"
#include "comm/job_auth.h"
#include "comm/net.h"
#include "oneflow_sbp/values/quoted_input.h"
#include "oneflow_sbp/values/status_macros.h"

extern char** environ;

namespace oneflow_sbp::comm {
namespace {

absl::Status CheckOptions(const LaunchOptions& o, absl::Span<const std::string> argv) {
  if (argv.empty() || argv[0].empty()) return absl::InvalidArgumentError("launch: empty command");
  if (o.nproc < 1 || o.nnodes < 1 || o.node_rank < 0 || o.node_rank >= o.nnodes) {
    return absl::InvalidArgumentError(absl::StrCat("launch: nproc ", o.nproc, ", nnodes ",
                                                   o.nnodes, ", node_rank ", o.node_rank,
                                                   " (need nproc, nnodes >= 1, node_rank < nnodes)"));
  }
  if (o.master_port < 0 || o.master_port > 65535) {
    return absl::InvalidArgumentError(absl::StrCat("launch: master_port ", o.master_port));
  }
  if (o.master_port == 0 && o.nnodes > 1) {
    return absl::InvalidArgumentError("launch: master_port 0 (pick one) needs nnodes == 1");
  }
  if (o.timeout <= absl::ZeroDuration() || o.failure_grace < absl::ZeroDuration() ||
      o.term_timeout < absl::ZeroDuration()) {
    return absl::InvalidArgumentError("launch: timeouts must not be negative");
  }
  return absl::OkStatus();
}

// argv[0] as an executable path: as is when it holds a '/', else searched
// in PATH here, because the child may only make async-signal-safe calls
// between fork and exec.
absl::StatusOr<std::string> ResolveCommand(const std::string& name) {
  if (name.find('/') != std::string::npos) return name;
  const char* path = std::getenv("PATH");
  for (absl::string_view dir : absl::StrSplit(path == nullptr ? "/usr/bin:/bin" : path, ':')) {
    const std::string candidate = absl::StrCat(dir.empty() ? "." : dir, "/", name);
    if (access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return absl::InvalidArgumentError(absl::StrCat("launch: ", QuotedInput(name), " is not in PATH"));
}

// The environment of one rank: ours, minus the variables we set, plus them.
std::vector<std::string> RankEnvironment(const LaunchOptions& o, int port, int local_rank,
                                         const std::string& secret) {
  std::vector<std::pair<std::string, std::string>> vars = {
      {kJobSecretVariable, secret},
      {"RANK", std::to_string(o.node_rank * o.nproc + local_rank)},
      {"WORLD_SIZE", std::to_string(o.nnodes * o.nproc)},
      {"LOCAL_RANK", std::to_string(local_rank)},
      {"LOCAL_WORLD_SIZE", std::to_string(o.nproc)},
      {"MASTER_ADDR", o.master_addr},
      {"MASTER_PORT", std::to_string(port)},
  };
  vars.insert(vars.end(), o.env.begin(), o.env.end());
  absl::flat_hash_set<std::string> names;
  for (const auto& [name, value] : vars) names.insert(name);
  std::vector<std::string> env;
  for (char** e = environ; *e != nullptr; ++e) {
    const absl::string_view entry(*e);
    if (!names.contains(entry.substr(0, entry.find('=')))) env.emplace_back(entry);
  }
  // Later entries of `vars` win (extra env overrides the standard ones).
  for (const auto& [name, value] : vars) {
    for (auto it = env.begin(); it != env.end(); ++it) {
      if (absl::StartsWith(*it, name + "=")) {
        env.erase(it);
        break;
      }
    }
    env.push_back(absl::StrCat(name, "=", value));
  }
  return env;
}

std::vector<char*> CStrings(std::vector<std::string>& v) {
  std::vector<char*> out;
  for (std::string& s : v) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

std::string DescribeExit(const RankExit& e) {
  if (e.signal != 0) {
    return absl::StrCat("rank ", e.rank, " (pid ", e.pid, ") was killed by signal ", e.signal,
                        " (", strsignal(e.signal), ")");
  }
  return absl::StrCat("rank ", e.rank, " (pid ", e.pid, ") exited with code ", e.exit_code,
                      e.exit_code == 127 ? " (command not runnable?)" : "");
}

// Children being waited for: one thread per child blocks in waitpid and
// records the exit here.
class Children {
 public:
  void Add(int rank, int pid) {
    absl::MutexLock lock(&mu_);
    exits_.push_back(RankExit{rank, pid});
    done_.push_back(false);
  }
  void Reaped(size_t i, int wait_status) {
    absl::MutexLock lock(&mu_);
    RankExit& e = exits_[i];
    if (WIFSIGNALED(wait_status)) {
      e.signal = WTERMSIG(wait_status);
    } else {
      e.exit_code = WEXITSTATUS(wait_status);
    }
    done_[i] = true;
    if (first_failure_ < 0 && (e.signal != 0 || e.exit_code != 0) && !e.terminated) {
      first_failure_ = static_cast<int>(i);
    }
  }
  // Waits until every child exited, or one failed (if `stop_on_failure`),
  // or the deadline.
  void Await(absl::Time deadline, bool stop_on_failure) {
    absl::MutexLock lock(&mu_);
    auto ready = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
      if (stop_on_failure && first_failure_ >= 0) return true;
      for (bool d : done_) {
        if (!d) return false;
      }
      return true;
    };
    mu_.AwaitWithDeadline(absl::Condition(&ready), deadline);
  }
  // Sends `sig` to every child still running and marks it terminated.
  void Signal(int sig) {
    absl::MutexLock lock(&mu_);
    for (size_t i = 0; i < exits_.size(); ++i) {
      if (done_[i]) continue;
      exits_[i].terminated = true;
      ::kill(exits_[i].pid, sig);
      // A stopped rank acts on SIGTERM only once continued.
      if (exits_[i].stopped_by != 0 && sig == SIGTERM) ::kill(exits_[i].pid, SIGCONT);
    }
  }
  void Stopped(size_t i, int sig) {
    absl::MutexLock lock(&mu_);
    if (sig != 0) exits_[i].stopped_by = sig;
  }
  bool AllDone() {
    absl::MutexLock lock(&mu_);
    for (bool d : done_) {
      if (!d) return false;
    }
    return true;
  }
  int first_failure() {
    absl::MutexLock lock(&mu_);
    return first_failure_;
  }
  std::vector<RankExit> exits() {
    absl::MutexLock lock(&mu_);
    return exits_;
  }
  int pid(size_t i) {
    absl::MutexLock lock(&mu_);
    return exits_[i].pid;
  }

 private:
  absl::Mutex mu_;
  std::vector<RankExit> exits_ ABSL_GUARDED_BY(mu_);
  std::vector<bool> done_ ABSL_GUARDED_BY(mu_);
  int first_failure_ ABSL_GUARDED_BY(mu_) = -1;
};

// Copies the lines a rank writes to one of its streams onto the launcher's
// (`to`: 1 or 2), each prefixed "[rank N] ", one write(2) per line under a
// lock shared by every rank's readers, so lines never interleave.
class PrefixedStream {
 public:
  PrefixedStream(int rank, int to, absl::Mutex* write_mu)
      : prefix_(absl::StrCat("[rank ", rank, "] ")), to_(to), write_mu_(write_mu) {}
  ~PrefixedStream() {
    if (thread_.joinable()) thread_.join();
    if (read_fd_ >= 0) close(read_fd_);
    if (write_fd_ >= 0) close(write_fd_);
  }

  // The pipe the rank writes into; its write end goes to the child.
  absl::Status Open() {
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0) {
      return absl::UnavailableError(absl::StrCat("launch: pipe: ", std::strerror(errno)));
    }
    read_fd_ = fds[0];
    write_fd_ = fds[1];
    return absl::OkStatus();
  }
  int write_fd() const { return write_fd_; }

  // After the fork: the launcher keeps only the read end and copies until
  // every writer is gone, or until `stop` is set and nothing is left to read
  // (a grandchild that keeps the pipe open cannot hold the launcher).
  // kResourceExhausted when the copying thread cannot be started (thread
  // or memory limits).
  absl::Status Start(const std::atomic<bool>* stop) {
    close(write_fd_);
    write_fd_ = -1;
    try {
      thread_ = std::thread([this, stop] { Copy(stop); });
    } catch (const std::system_error& e) {
      return absl::ResourceExhaustedError(
          absl::StrCat("launch: cannot start the thread that copies a rank's output: ", e.what()));
    }
    return absl::OkStatus();
  }

 private:
  void Copy(const std::atomic<bool>* stop) {
    std::string pending;
    char buf[4096];
    // Once the ranks have ended, at most a second more of copying: a
    // grandchild that keeps the pipe open and keeps writing must not hold
    // the launcher.
    std::optional<absl::Time> drain_until;
    while (true) {
      if (stop->load()) {
        if (!drain_until) drain_until = absl::Now() + absl::Seconds(1);
        if (absl::Now() >= *drain_until) break;
      }
      pollfd p{read_fd_, POLLIN, 0};
      const int ready = poll(&p, 1, 100);
      if (ready == 0) {
        if (stop->load()) break;
        continue;
      }
      if (ready < 0 && errno == EINTR) continue;
      const ssize_t n = ready < 0 ? -1 : read(read_fd_, buf, sizeof(buf));
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      pending.append(buf, static_cast<size_t>(n));
      size_t start = 0;
      for (size_t nl; (nl = pending.find('\n', start)) != std::string::npos; start = nl + 1) {
        Emit(absl::string_view(pending).substr(start, nl + 1 - start));
      }
      pending.erase(0, start);
    }
    if (!pending.empty()) Emit(pending + "\n");
  }
  void Emit(absl::string_view line) {
    const std::string out = absl::StrCat(prefix_, line);
    absl::MutexLock lock(write_mu_);
    size_t done = 0;
    while (done < out.size()) {
      const ssize_t w = write(to_, out.data() + done, out.size() - done);
      if (w < 0 && errno == EINTR) continue;
      if (w <= 0) return;
      done += static_cast<size_t>(w);
    }
  }

  const std::string prefix_;
  const int to_;
  absl::Mutex* const write_mu_;
  int read_fd_ = -1;
  int write_fd_ = -1;
  std::thread thread_;
};

// Forks and execs one rank; with out_fd/err_fd >= 0 its stdout/stderr are
// those descriptors. The child reports an exec failure's errno through a
// close-on-exec pipe, so a bad command is an error here rather than a
// mysterious exit code 127.
absl::StatusOr<int> Spawn(const std::string& path, std::vector<char*>& argv,
                          std::vector<char*>& envp, int out_fd = -1, int err_fd = -1) {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) {
    return absl::UnavailableError(absl::StrCat("launch: pipe: ", std::strerror(errno)));
  }
  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid < 0) {
    close(fds[0]);
    close(fds[1]);
    return absl::UnavailableError(absl::StrCat("launch: fork: ", std::strerror(errno)));
  }
  if (pid == 0) {
    // Only async-signal-safe calls from here to exec.
    close(fds[0]);
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(126);  // the launcher died before prctl
    if (out_fd >= 0) dup2(out_fd, STDOUT_FILENO);
    if (err_fd >= 0) dup2(err_fd, STDERR_FILENO);
    execve(path.c_str(), argv.data(), envp.data());
    const int err = errno;
    (void)!write(fds[1], &err, sizeof(err));
    _exit(127);
  }
  close(fds[1]);
  int err = 0;
  ssize_t n;
  do {
    n = read(fds[0], &err, sizeof(err));
  } while (n < 0 && errno == EINTR);
  close(fds[0]);
  if (n == static_cast<ssize_t>(sizeof(err))) {
    waitpid(pid, nullptr, 0);
    return absl::UnavailableError(
        absl::StrCat("launch: cannot execute ", path, ": ", std::strerror(err)));
  }
  return pid;
}

absl::StatusOr<int> MasterPort(const LaunchOptions& options) {
  if (options.master_port == 0) return net::PickFreePort(options.master_addr);
  if (options.node_rank == 0) {
    // Rank 0 will serve the store here: a port another job (or program)
    // holds fails now, by name, before any rank starts.
    absl::StatusOr<net::Socket> probe = net::Listen(options.master_addr, options.master_port, 1);
    if (!probe.ok()) {
      return absl::UnavailableError(absl::StrCat(
          "launch: MASTER_PORT ", options.master_port, " on ", options.master_addr,
          " is not free (another job's rendezvous store?): ", probe.status().message()));
    }
  }
  return options.master_port;
}

// The job secret: the launcher's own OFS_JOB_SECRET (or LaunchOptions::env's),
// else a fresh one when this is the only node.
absl::StatusOr<std::string> JobSecret(const LaunchOptions& options) {
  for (const auto& [name, value] : options.env) {
    if (name == kJobSecretVariable && !value.empty()) return value;
  }
  const char* mine = std::getenv(kJobSecretVariable);
  if (mine != nullptr && *mine != '\0') return std::string(mine);
  if (options.nnodes > 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "launch: with ", options.nnodes, " nodes set ", kJobSecretVariable,
        " to one value on every node (e.g. openssl rand -hex 32)"));
  }
  return NewJobSecret();
}

// With prefix_output: two prefixed streams per rank, stopped (once the
// ranks have ended) by `stop_copying`.
// Ends a child this launcher can no longer watch; its wait status.
int KillAndReap(int pid) {
  kill(pid, SIGKILL);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return status;
}

struct RankOutput {
  absl::Mutex write_mu;
  std::atomic<bool> stop_copying{false};
  std::vector<std::unique_ptr<PrefixedStream>> streams;
};

// Spawns local rank `local`; with prefix_output its stdout and stderr go
// through two new streams of `output`.
absl::StatusOr<int> SpawnRank(const LaunchOptions& options, const std::string& path,
                              std::vector<char*>& cargs, int master_port, int local,
                              const std::string& secret, RankOutput& output) {
  std::vector<std::string> env = RankEnvironment(options, master_port, local, secret);
  std::vector<char*> cenv = CStrings(env);
  PrefixedStream* out = nullptr;
  PrefixedStream* err = nullptr;
  if (options.prefix_output) {
    const int rank = options.node_rank * options.nproc + local;
    absl::Status open_error;
    for (int to : {STDOUT_FILENO, STDERR_FILENO}) {
      output.streams.push_back(std::make_unique<PrefixedStream>(rank, to, &output.write_mu));
      if (absl::Status s = output.streams.back()->Open(); !s.ok()) open_error = s;
    }
    OFS_RETURN_IF_ERROR(open_error);
    out = output.streams[output.streams.size() - 2].get();
    err = output.streams.back().get();
  }
  absl::StatusOr<int> pid =
      Spawn(path, cargs, cenv, out ? out->write_fd() : -1, err ? err->write_fd() : -1);
  if (out != nullptr) {
    absl::Status started = out->Start(&output.stop_copying);
    absl::Status err_started = err->Start(&output.stop_copying);
    if (started.ok()) started = err_started;
    if (!started.ok() && pid.ok()) {
      // Nobody would read the rank's output: end it now.
      KillAndReap(*pid);
      return started;
    }
  }
  return pid;
}

struct RanksEnded {
  bool failed;     // a rank failed (before the others were terminated)
  bool timed_out;  // the deadline passed with ranks still running
};

// Waits for the ranks (unless spawning failed), gives the others
// failure_grace after a failure, then terminates whatever still runs.
RanksEnded AwaitRanks(const LaunchOptions& options, absl::Time deadline, bool all_spawned,
                      Children& children) {
  if (all_spawned) children.Await(deadline, /*stop_on_failure=*/true);
  const bool failed = children.first_failure() >= 0;
  const bool timed_out = all_spawned && !failed && !children.AllDone();
  if (failed && options.failure_grace > absl::ZeroDuration()) {
    children.Await(std::min(deadline, absl::Now() + options.failure_grace),
                   /*stop_on_failure=*/false);
  }
  if (!children.AllDone()) {
    children.Signal(SIGTERM);
    children.Await(absl::Now() + options.term_timeout, /*stop_on_failure=*/false);
    children.Signal(SIGKILL);
  }
  return RanksEnded{failed, timed_out};
}

absl::Status LaunchFailure(const std::vector<RankExit>& ranks, int first_failure) {
  std::vector<int> terminated;
  std::string stopped;
  for (const RankExit& e : ranks) {
    if (e.terminated) terminated.push_back(e.rank);
    if (e.stopped_by != 0 && stopped.empty()) {
      // The others failed because this one stopped answering.
      stopped = absl::StrCat("rank ", e.rank, " (pid ", e.pid, ") was stopped by signal ",
                             e.stopped_by, " (", strsignal(e.stopped_by),
                             ") and stopped answering; then ");
    }
  }
  return absl::AbortedError(absl::StrCat(
      "launch failed: ", stopped, DescribeExit(ranks[first_failure]),
      terminated.empty() ? ""
                         : absl::StrCat("; terminated ranks ", absl::StrJoin(terminated, ","))));
}

}  // namespace

absl::StatusOr<LaunchResult> Launch(const LaunchOptions& options,
                                    absl::Span<const std::string> argv) {
  if (absl::Status s = CheckOptions(options, argv); !s.ok()) return s;
  OFS_ASSIGN_OR_RETURN(std::string path, ResolveCommand(argv[0]));
  LaunchResult result;
  OFS_ASSIGN_OR_RETURN(std::string secret, JobSecret(options));
  OFS_ASSIGN_OR_RETURN(int port, MasterPort(options));
  result.master_port = port;
  const absl::Time deadline = absl::Now() + options.timeout;

  std::vector<std::string> args(argv.begin(), argv.end());
  std::vector<char*> cargs = CStrings(args);
  Children children;
  std::vector<std::thread> waiters;
  absl::Status spawn_error;
  RankOutput output;
  for (int local = 0; local < options.nproc; ++local) {
    absl::StatusOr<int> pid = SpawnRank(options, path, cargs, result.master_port, local, secret,
                                         output);
    if (!pid.ok()) {
      spawn_error = pid.status();
      break;
    }
    children.Add(options.node_rank * options.nproc + local, *pid);
    try {
      waiters.emplace_back([&children, local, pid = *pid] {
        int status = 0;
        for (;;) {
          const int rc = waitpid(pid, &status, WUNTRACED | WCONTINUED);
          if (rc < 0 && errno == EINTR) continue;
          if (rc > 0 && WIFSTOPPED(status)) {
            children.Stopped(local, WSTOPSIG(status));
            continue;
          }
          if (rc > 0 && WIFCONTINUED(status)) continue;
          break;
        }
        children.Reaped(local, status);
      });
    } catch (const std::system_error& e) {
      // Without its waiter the rank would never be reaped: end it here.
      children.Reaped(local, KillAndReap(*pid));
      spawn_error = absl::ResourceExhaustedError(absl::StrCat(
          "launch: cannot start the thread that waits for local rank ", local, ": ", e.what()));
      break;
    }
  }

  const RanksEnded ended = AwaitRanks(options, deadline, spawn_error.ok(), children);
  for (std::thread& t : waiters) t.join();
  output.stop_copying.store(true);
  output.streams.clear();  // joins the copying threads once they have drained
  result.ranks = children.exits();

  OFS_RETURN_IF_ERROR(spawn_error);
  if (ended.failed) return LaunchFailure(result.ranks, children.first_failure());
  if (ended.timed_out) {
    return absl::DeadlineExceededError(absl::StrCat("launch timed out after ",
                                                    absl::FormatDuration(options.timeout),
                                                    "; every rank was terminated"));
  }
  return result;
}

absl::StatusOr<std::unique_ptr<Communicator>> ConnectFromEnvironment(absl::Duration timeout) {
  auto var = [](const char* name) -> absl::StatusOr<std::string> {
    const char* v = std::getenv(name);
    if (v == nullptr || *v == '\0') {
      return absl::FailedPreconditionError(
          absl::StrCat(name, " is not set: this process was not started by a launcher"));
    }
    return std::string(v);
  };
  auto number = [&](const char* name) -> absl::StatusOr<int> {
    OFS_ASSIGN_OR_RETURN(std::string v, var(name));
    int n = 0;
    if (!absl::SimpleAtoi(v, &n)) {
      return absl::InvalidArgumentError(absl::StrCat(name, "=", QuotedInput(v), " is not a number"));
    }
    return n;
  };
  GlooOptions o;
  absl::StatusOr<std::string> secret = var(kJobSecretVariable);
  if (!secret.ok()) {
    return absl::FailedPreconditionError(absl::StrCat(
        secret.status().message(), " (", kJobSecretVariable,
        " holds the job secret; sbp launch sets it, a rank started by hand needs the same value "
        "in every rank)"));
  }
  OFS_ASSIGN_OR_RETURN(absl::Duration call_timeout, SecondsFromEnvironment("OFS_TIMEOUT", timeout));
  OFS_ASSIGN_OR_RETURN(absl::Duration heartbeat, SecondsFromEnvironment("OFS_HEARTBEAT_TIMEOUT",
      o.heartbeat_timeout));
  OFS_ASSIGN_OR_RETURN(int rank, number("RANK"));
  OFS_ASSIGN_OR_RETURN(int size, number("WORLD_SIZE"));
  OFS_ASSIGN_OR_RETURN(std::string addr, var("MASTER_ADDR"));
  OFS_ASSIGN_OR_RETURN(int port, number("MASTER_PORT"));
  o.rank = rank;
  o.size = size;
  o.master_addr = addr;
  o.master_port = port;
  o.connect_timeout = call_timeout;
  o.default_timeout = call_timeout;
  o.job_secret = *secret;
  o.heartbeat_timeout = heartbeat;
  return ConnectGloo(o);
}

absl::StatusOr<absl::Duration> SecondsFromEnvironment(const char* name, absl::Duration fallback) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return fallback;
  double seconds = 0;
  if (!absl::SimpleAtod(v, &seconds) || !(seconds >= 0) || seconds > 1e9) {
    return absl::InvalidArgumentError(
        absl::StrCat(name, "=", QuotedInput(v), " is not a number of seconds (>= 0)"));
  }
  return absl::Seconds(seconds);
}

}  // namespace oneflow_sbp::comm
