// The `sbp` tool's flags (flags.cc): one table of every flag's name, type,
// default and help, and the typed values one command line gives them. The
// command line is parsed once (command_line.h): each value is checked
// against its flag's type there (a wrong one is exit 2), and the runners
// read typed values, never text to parse again (tests/cli/flags_test.cc
// runs this example):
//
//   FlagValues v;
//   v.Set(*FindFlag("nproc"), "4");   // OK; "four" is kInvalidArgument
//   v.Int("nproc");                   // 4
//   v.Int("nnodes");                  // 1, the default
//   v.Text("placement");              // nullopt: not given, no default
//
// Reading a flag the table lacks, or as another type, is a bug in the
// runner (OFS_CHECK), not a user's error.
#ifndef CLI_FLAGS_H_
#define CLI_FLAGS_H_

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <variant>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"

namespace oneflow_sbp::cli {

enum class FlagType { kText, kBool, kInt, kInt64, kUint64, kDouble };

struct FlagSpec {
  const char* name;
  FlagType type;
  // The value when the flag is not given, as text; nullptr: none (the
  // command treats the flag as absent).
  const char* default_value;
  const char* help;
};

// Every flag of the tool, in the order `sbp help` lists them.
absl::Span<const FlagSpec> AllFlags();
// The flag named `name`, or nullptr.
const FlagSpec* FindFlag(absl::string_view name);

// One value of a flag's type (kInt keeps an int32 range in an int64_t).
using FlagValue = std::variant<std::string, bool, int64_t, uint64_t, double>;

class FlagValues {
 public:
  // Checks `text` against the flag's type and keeps the value; a value
  // that does not fit is kInvalidArgument "bad value '...' for --NAME:
  // expected an integer". A flag given twice keeps the last value.
  absl::Status Set(const FlagSpec& spec, absl::string_view text);
  // Whether the command line gave the flag.
  bool given(absl::string_view name) const;

  // The value given, else the default; Text is nullopt for a text flag
  // with neither, String "" then; OptionalInt likewise for an int flag.
  std::optional<std::string> Text(absl::string_view name) const;
  std::string String(absl::string_view name) const;
  bool Bool(absl::string_view name) const;
  std::optional<int> OptionalInt(absl::string_view name) const;
  int Int(absl::string_view name) const;
  int64_t Int64(absl::string_view name) const;
  uint64_t Uint64(absl::string_view name) const;
  double Double(absl::string_view name) const;

 private:
  std::optional<FlagValue> Value(absl::string_view name, FlagType type) const;
  template <typename T>
  T Required(absl::string_view name, FlagType type) const;

  std::map<std::string, FlagValue, std::less<>> values_;
};

}  // namespace oneflow_sbp::cli

#endif  // CLI_FLAGS_H_
