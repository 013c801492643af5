// The `sbp` tool's flags, declared for the command runners that read them
// (defined in sbp_flags.cc). Only these belong to the command line:
// IsSbpFlag tells them from absl's own (--flagfile, --fromenv, ...) and any a
// library might define, which the tool refuses unread (command_line.h).
#ifndef CLI_SBP_FLAGS_H_
#define CLI_SBP_FLAGS_H_

#include <cstdint>
#include <optional>
#include <string>

#include "absl/flags/declare.h"
#include "absl/flags/commandlineflag.h"

ABSL_DECLARE_FLAG(std::string, format);
ABSL_DECLARE_FLAG(std::optional<std::string>, sbp);
ABSL_DECLARE_FLAG(std::optional<std::string>, nd_sbp);
ABSL_DECLARE_FLAG(std::optional<std::string>, placement);
ABSL_DECLARE_FLAG(std::optional<std::string>, shape);
ABSL_DECLARE_FLAG(std::string, dtype);
ABSL_DECLARE_FLAG(std::optional<std::string>, op);
ABSL_DECLARE_FLAG(std::optional<std::string>, from);
ABSL_DECLARE_FLAG(std::optional<std::string>, to);
ABSL_DECLARE_FLAG(std::optional<std::string>, to_placement);
ABSL_DECLARE_FLAG(std::optional<std::string>, cost);
ABSL_DECLARE_FLAG(bool, explain);
ABSL_DECLARE_FLAG(std::optional<std::string>, calibration);
ABSL_DECLARE_FLAG(std::optional<std::string>, execute);
ABSL_DECLARE_FLAG(int, nproc);
ABSL_DECLARE_FLAG(int, nproc_per_node);
ABSL_DECLARE_FLAG(int, nnodes);
ABSL_DECLARE_FLAG(int, node_rank);
ABSL_DECLARE_FLAG(std::string, master_addr);
ABSL_DECLARE_FLAG(int, master_port);
ABSL_DECLARE_FLAG(std::string, backend);
ABSL_DECLARE_FLAG(double, timeout);
ABSL_DECLARE_FLAG(double, heartbeat_timeout);
ABSL_DECLARE_FLAG(std::string, rank_prefix);
ABSL_DECLARE_FLAG(std::optional<std::string>, out);
ABSL_DECLARE_FLAG(uint64_t, seed);
ABSL_DECLARE_FLAG(std::optional<int>, repeat);
ABSL_DECLARE_FLAG(std::string, device);
ABSL_DECLARE_FLAG(std::string, mesh);
ABSL_DECLARE_FLAG(int64_t, batch);
ABSL_DECLARE_FLAG(int64_t, seq);
ABSL_DECLARE_FLAG(int64_t, hidden);
ABSL_DECLARE_FLAG(int64_t, heads);
ABSL_DECLARE_FLAG(int64_t, ffn);
ABSL_DECLARE_FLAG(int64_t, vocab);
ABSL_DECLARE_FLAG(int, layers);
ABSL_DECLARE_FLAG(int, steps);
ABSL_DECLARE_FLAG(std::optional<std::string>, trace);
ABSL_DECLARE_FLAG(bool, all_ops);
ABSL_DECLARE_FLAG(std::optional<std::string>, record);
ABSL_DECLARE_FLAG(std::string, model);
ABSL_DECLARE_FLAG(std::optional<std::string>, save);
ABSL_DECLARE_FLAG(std::optional<std::string>, resume);
ABSL_DECLARE_FLAG(std::optional<std::string>, request);
ABSL_DECLARE_FLAG(std::optional<std::string>, program);
ABSL_DECLARE_FLAG(std::optional<std::string>, memory_cap);
ABSL_DECLARE_FLAG(std::optional<std::string>, work_budget);
ABSL_DECLARE_FLAG(bool, collectives_only);
ABSL_DECLARE_FLAG(bool, training);

namespace oneflow_sbp::cli {

// A flag defined in sbp_flags.cc.
bool IsSbpFlag(const absl::CommandLineFlag& flag);

}  // namespace oneflow_sbp::cli

#endif  // CLI_SBP_FLAGS_H_
