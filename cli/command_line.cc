#include "cli/command_line.h"

#include <optional>

#include "absl/flags/reflection.h"
#include "absl/strings/cord.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "oneflow_sbp/values/quoted_input.h"

namespace oneflow_sbp::cli {
namespace {

// What a flag's value must look like, for the error message.
std::string Expected(const absl::CommandLineFlag& flag) {
  if (flag.IsOfType<bool>()) return "true or false";
  if (flag.IsOfType<int>() || flag.IsOfType<int64_t>()) return "an integer";
  if (flag.IsOfType<uint64_t>()) return "a non-negative integer";
  return "a value";
}

bool IsRepeated(absl::string_view name) {
  return name == "input" || name == "attr" || name == "constraint";
}

// Flags absl registers that read files or the environment; named in their
// own message so no one wonders why a documented absl flag is "unknown".
bool ReadsOutside(absl::string_view name) {
  return name == "flagfile" || name == "fromenv" || name == "tryfromenv" || name == "undefok";
}

// One pass over the arguments into a CommandLine. The first error is kept;
// after it only the command word is still wanted.
class CommandLineParser {
 public:
  CommandLineParser(absl::Span<const std::string> args,
                    absl::FunctionRef<bool(const absl::CommandLineFlag&)> allowed, CommandLine* out)
      : args_(args), allowed_(allowed), out_(out) {}

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
        const absl::CommandLineFlag* f = absl::FindCommandLineFlag(name);
        if (IsRepeated(name) || (f != nullptr && !f->IsOfType<bool>())) ++i_;
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
      out_->given.insert(name);
      return;
    }
    SetFlag(name, std::move(value));
  }

  // Sets the registered flag `name` (or, for --noNAME, the bool flag NAME).
  void SetFlag(const std::string& name, std::optional<std::string> value) {
    absl::CommandLineFlag* flag = absl::FindCommandLineFlag(name);
    std::string flag_name = name;
    if ((flag == nullptr || !allowed_(*flag)) && absl::StartsWith(name, "no") && !value) {
      // --noexplain: a bool flag set to false.
      absl::CommandLineFlag* positive = absl::FindCommandLineFlag(name.substr(2));
      if (positive != nullptr && allowed_(*positive) && positive->IsOfType<bool>()) {
        flag = positive;
        flag_name = name.substr(2);
        value = "false";
      }
    }
    if (flag == nullptr || !allowed_(*flag)) {
      unknown_ = name;
      Fail("unknown flag");
      return;
    }
    if (!value && flag->IsOfType<bool>()) value = "true";
    if (!TakeValue(name, &value)) return;
    std::string error;
    if (!flag->ParseFrom(*value, &error)) {
      Fail(absl::StrCat("bad value ", QuotedInput(*value), " for --", flag_name, ": expected ",
                        Expected(*flag)));
      return;
    }
    out_->given.insert(flag_name);
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
  const absl::FunctionRef<bool(const absl::CommandLineFlag&)> allowed_;
  CommandLine* const out_;
  size_t i_ = 0;  // the argument being read
  absl::Status first_error_;
  std::string unknown_;  // an unknown flag's name; its message needs the command
};

}  // namespace

absl::Status ParseCommandLine(absl::Span<const std::string> args,
                              absl::FunctionRef<bool(const absl::CommandLineFlag&)> allowed,
                              CommandLine* out) {
  return CommandLineParser(args, allowed, out).Parse();
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
