#include "cli/command_line.h"

#include <algorithm>
#include <optional>

#include "absl/strings/cord.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "oneflow_sbp/values/quoted_input.h"

namespace oneflow_sbp::cli {
namespace {

bool IsRepeated(absl::string_view name) {
  return name == "input" || name == "attr" || name == "constraint";
}

// absl's flags that read files or the environment, which other tools built
// on absl take: named in their own message so no one wonders why they are
// "unknown".
bool ReadsOutside(absl::string_view name) {
  return name == "flagfile" || name == "fromenv" || name == "tryfromenv" || name == "undefok";
}

// One pass over the arguments into a CommandLine. The first error is kept;
// after it only the command word is still wanted.
class CommandLineParser {
 public:
  CommandLineParser(absl::Span<const std::string> args, CommandLine* out)
      : args_(args), out_(out) {}

  absl::Status Parse() {
    for (i_ = 0; i_ < args_.size(); ++i_) {
      const std::string& arg = args_[i_];
      if (arg == "--") {  // what follows belongs to a launched command
        out_->positional.insert(out_->positional.end(), args_.begin() + i_ + 1, args_.end());
        break;
      }
      if (!absl::StartsWith(arg, "-") || arg == "-") {
        if (out_->command.empty()) {
          out_->command = arg;
        } else {
          out_->positional.push_back(arg);
        }
        continue;
      }
      ParseFlag(arg);
    }
    if (!unknown_.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat("unknown flag --", Abbreviated(unknown_, kMaxQuotedChars), "; see `sbp help",
                       out_->command.empty() ? "" : " ", out_->command, "`"));
    }
    return first_error_;
  }

 private:
  // The flag `arg` (args_[i_]); may consume the next argument as its value.
  void ParseFlag(const std::string& arg) {
    absl::string_view body = absl::StripPrefix(absl::StripPrefix(arg, "-"), "-");
    const size_t eq = body.find('=');
    const std::string name(body.substr(0, eq));
    std::optional<std::string> value;
    if (eq != absl::string_view::npos) value = std::string(body.substr(eq + 1));
    if (!first_error_.ok()) {
      // Only the command word is still wanted; skip a separate value.
      if (!value && i_ + 1 < args_.size() && !absl::StartsWith(args_[i_ + 1], "-")) {
        const FlagSpec* f = FindFlag(name);
        if (IsRepeated(name) || (f != nullptr && f->type != FlagType::kBool)) ++i_;
      }
      return;
    }
    if (ReadsOutside(name)) {
      Fail(absl::StrCat("--", name, " is not supported; give the flags on the command line"));
      return;
    }
    if (IsRepeated(name)) {
      if (!TakeValue(name, &value)) return;
      (name == "input" ? out_->input : name == "attr" ? out_->attr : out_->constraint)
          .push_back(*value);
      Given(name);
      return;
    }
    SetFlag(name, std::move(value));
  }

  // Sets the flag `name` (or, for --noNAME, the bool flag NAME).
  void SetFlag(const std::string& name, std::optional<std::string> value) {
    const FlagSpec* flag = FindFlag(name);
    if (flag == nullptr && absl::StartsWith(name, "no") && !value) {
      // --noexplain: a bool flag set to false.
      const FlagSpec* positive = FindFlag(name.substr(2));
      if (positive != nullptr && positive->type == FlagType::kBool) {
        flag = positive;
        value = "false";
      }
    }
    if (flag == nullptr) {
      unknown_ = name;
      Fail("unknown flag");
      return;
    }
    if (!value && flag->type == FlagType::kBool) value = "true";
    if (!TakeValue(name, &value)) return;
    const absl::Status set = out_->flags.Set(*flag, *value);
    if (!set.ok()) {
      Fail(std::string(set.message()));
      return;
    }
    Given(flag->name);
  }

  void Given(const std::string& name) {
    if (std::find(out_->given.begin(), out_->given.end(), name) == out_->given.end()) {
      out_->given.push_back(name);
    }
  }

  // Leaves `*value` as given after '=', or takes the next argument.
  bool TakeValue(const std::string& name, std::optional<std::string>* value) {
    if (*value) return true;
    if (i_ + 1 >= args_.size()) {
      Fail(absl::StrCat("--", name, " needs a value"));
      return false;
    }
    *value = args_[++i_];
    return true;
  }

  void Fail(std::string why) {
    if (first_error_.ok()) first_error_ = absl::InvalidArgumentError(std::move(why));
  }

  const absl::Span<const std::string> args_;
  CommandLine* const out_;
  size_t i_ = 0;  // the argument being read
  absl::Status first_error_;
  std::string unknown_;  // an unknown flag's name; its message needs the command
};

}  // namespace

absl::Status ParseCommandLine(absl::Span<const std::string> args, CommandLine* out) {
  return CommandLineParser(args, out).Parse();
}

namespace {
constexpr char kUsagePayload[] = "oneflow_sbp/usage_error";
}  // namespace

absl::Status UsageError(absl::string_view message) {
  absl::Status s = absl::InvalidArgumentError(message);
  s.SetPayload(kUsagePayload, absl::Cord("1"));
  return s;
}

bool IsUsageError(const absl::Status& status) {
  return status.GetPayload(kUsagePayload).has_value();
}

}  // namespace oneflow_sbp::cli
