#include "tests/runtime/fault_soak.h"

#include <dirent.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <random>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "boxing/calibration.h"
#include "runtime/executor.h"
#include "boxing/planner.h"
#include "oneflow_sbp/storage/local_tensor.h"
#include "oneflow_sbp/values/status_macros.h"
#include "kernels/shard_harness.h"

namespace oneflow_sbp::testing {

std::string SoakCase::ToString() const {
  return absl::StrCat(DataTypeName(dtype), shape.ToString(), " ", src.ToString(), " -> ",
                      dst.ToString(), " on ", placement.ToString());
}

SoakCase RandomCase(uint64_t seed) {
  std::mt19937_64 rng(seed * 0x9e3779b97f4a7c15ull + 1);
  // Meshes of 4 to 6 ranks.
  static const char* const kPlacements[] = {"cpu:0-3", "cpu:0-3 [2,2]", "cpu:0-4",
                                            "cpu:0-5", "cpu:0-5 [2,3]", "cpu:0-5 [3,2]"};
  static const SbpParallel kValues[] = {SbpParallel::Split(0), SbpParallel::Split(1),
                                        SbpParallel::Broadcast(), SbpParallel::PartialSum()};
  SoakCase c;
  c.placement = *Placement::Parse(kPlacements[rng() % 6]);
  c.shape = Shape{static_cast<int64_t>(1 + rng() % 13), static_cast<int64_t>(1 + rng() % 13)};
  c.dtype = rng() % 2 ? DataType::kFloat32 : DataType::kInt32;
  for (int i = 0; i < c.placement.num_axes(); ++i) {
    c.src.push_back(kValues[rng() % 4]);
    c.dst.push_back(kValues[rng() % 4]);
  }
  return c;
}

absl::StatusOr<boxing::BoxingPlan> PlanFor(const SoakCase& c) {
  return boxing::PlanBoxing({c.shape, c.dtype, c.placement, c.src, c.placement, c.dst},
                            boxing::Calibration::Defaults(NdSbp::kMaxAxes));
}

const char* FaultKindName(FaultKind kind) {
  switch (kind) {
    case FaultKind::kNone: return "none";
    case FaultKind::kReturnError: return "return_error";
    case FaultKind::kThrow: return "throw";
    case FaultKind::kAbort: return "abort_call";
    case FaultKind::kSleep: return "sleep";
    case FaultKind::kExit: return "exit";
    case FaultKind::kCrash: return "crash";
  }
  return "?";
}

absl::StatusOr<FaultKind> ParseFaultKind(const std::string& name) {
  for (FaultKind k : {FaultKind::kNone, FaultKind::kReturnError, FaultKind::kThrow,
                      FaultKind::kAbort, FaultKind::kSleep, FaultKind::kExit, FaultKind::kCrash}) {
    if (name == FaultKindName(k)) return k;
  }
  return absl::InvalidArgumentError(absl::StrCat("unknown fault kind '", name, "'"));
}

boxing::BoxingPlan StepPlan(const boxing::BoxingPlan& plan, int k) {
  boxing::BoxingPlan step = plan;
  step.src = k == 0 ? plan.src : plan.steps[k - 1].result;
  step.dst = plan.steps[k].result;
  step.steps = {plan.steps[k]};
  return step;
}

namespace {

// Integer values, exact in f32 and i32 whatever the order of additions.
LocalTensor FullTensor(const SoakCase& c) {
  LocalTensor t = *LocalTensor::Empty(c.dtype, c.shape.dims());
  for (int64_t i = 0; i < t.elem_cnt(); ++i) t.SetDouble(i, static_cast<double>(i % 97 + 1));
  return t;
}

}  // namespace

absl::Status RunSoakRank(const SoakCase& c, const boxing::BoxingPlan& plan, const Fault& fault,
                         comm::Communicator& world,
                         const std::function<absl::Status(comm::Communicator&)>& inject) {
  const LocalTensor full = FullTensor(c);
  OFS_ASSIGN_OR_RETURN(std::vector<LocalTensor> shards,
                       kernels::DistributeTensor(full, c.src, c.placement));
  OFS_ASSIGN_OR_RETURN(int64_t id, c.placement.ParallelIdOf(world.rank()));
  LocalTensor shard = shards[id];
  const int steps = static_cast<int>(plan.steps.size());
  if (fault.kind == FaultKind::kNone) {
    OFS_ASSIGN_OR_RETURN(shard, runtime::ExecutePlan(plan, shard, world));
  } else {
    for (int k = 0; k <= steps; ++k) {
      if (world.rank() == fault.rank && k == fault.step) OFS_RETURN_IF_ERROR(inject(world));
      if (k == steps) break;
      OFS_ASSIGN_OR_RETURN(shard, runtime::ExecutePlan(StepPlan(plan, k), shard, world));
    }
  }
  OFS_RETURN_IF_ERROR(world.Barrier());
  // Partial sums have many right answers; other layouts have one.
  if (!c.dst.any_partial_sum()) {
    OFS_ASSIGN_OR_RETURN(std::vector<LocalTensor> want,
                         kernels::DistributeTensor(full, c.dst, c.placement));
    if (!ExactlyEqual(shard, want[id])) {
      return absl::DataLossError(
          absl::StrCat("rank ", world.rank(), ": wrong destination shard for ", c.ToString()));
    }
  }
  return absl::OkStatus();
}

namespace {

int CountDirEntries(const char* path) {
  DIR* dir = opendir(path);
  if (dir == nullptr) return -1;
  int n = 0;
  while (dirent* e = readdir(dir)) {
    if (e->d_name[0] != '.') ++n;
  }
  closedir(dir);
  return n;
}

}  // namespace

int CountThreads() { return CountDirEntries("/proc/self/task"); }

// The directory stream's own descriptor is not counted.
int CountOpenFds() { return CountDirEntries("/proc/self/fd") - 1; }

int CountChildren() {
  const pid_t me = getpid();
  DIR* proc = opendir("/proc");
  if (proc == nullptr) return -1;
  int n = 0;
  while (dirent* e = readdir(proc)) {
    int pid = 0;
    if (!absl::SimpleAtoi(e->d_name, &pid)) continue;
    FILE* f = std::fopen(absl::StrCat("/proc/", pid, "/stat").c_str(), "r");
    if (f == nullptr) continue;  // exited meanwhile
    // "pid (comm) state ppid ...": comm may hold spaces, so parse after ')'.
    char buf[512];
    const size_t len = std::fread(buf, 1, sizeof(buf) - 1, f);
    std::fclose(f);
    buf[len] = '\0';
    const char* close = strrchr(buf, ')');
    char state = 0;
    int ppid = 0;
    if (close != nullptr && std::sscanf(close + 1, " %c %d", &state, &ppid) == 2 && ppid == me) {
      ++n;
    }
  }
  closedir(proc);
  return n;
}

}  // namespace oneflow_sbp::testing
