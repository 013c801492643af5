#include "tools/command_line.h"

#include <optional>

#include "absl/flags/reflection.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "oneflow_sbp/quoted_input.h"

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

}  // namespace

absl::Status ParseCommandLine(absl::Span<const std::string> args,
                              absl::FunctionRef<bool(const absl::CommandLineFlag&)> allowed,
                              CommandLine* out) {
  absl::Status first_error;
  std::string unknown;  // an unknown flag's name; its message needs the command
  auto fail = [&](std::string why) {
    if (first_error.ok()) first_error = absl::InvalidArgumentError(std::move(why));
  };
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg == "--") {  // what follows belongs to a launched command
      out->positional.insert(out->positional.end(), args.begin() + i + 1, args.end());
      break;
    }
    if (!absl::StartsWith(arg, "-") || arg == "-") {
      if (out->command.empty()) {
        out->command = arg;
      } else {
        out->positional.push_back(arg);
      }
      continue;
    }
    absl::string_view body = absl::StripPrefix(absl::StripPrefix(arg, "-"), "-");
    const size_t eq = body.find('=');
    const std::string name(body.substr(0, eq));
    std::optional<std::string> value;
    if (eq != absl::string_view::npos) value = std::string(body.substr(eq + 1));
    if (!first_error.ok()) {
      // Only the command word is still wanted; skip a separate value.
      if (!value && i + 1 < args.size() && !absl::StartsWith(args[i + 1], "-")) {
        const absl::CommandLineFlag* f = absl::FindCommandLineFlag(name);
        if (IsRepeated(name) || (f != nullptr && !f->IsOfType<bool>())) ++i;
      }
      continue;
    }
    if (ReadsOutside(name)) {
      fail(absl::StrCat("--", name, " is not supported; give the flags on the command line"));
      continue;
    }
    auto take_value = [&]() -> bool {
      if (value) return true;
      if (i + 1 >= args.size()) {
        fail(absl::StrCat("--", name, " needs a value"));
        return false;
      }
      value = args[++i];
      return true;
    };
    if (IsRepeated(name)) {
      if (!take_value()) continue;
      (name == "input" ? out->input : name == "attr" ? out->attr : out->constraint)
          .push_back(*value);
      out->given.insert(name);
      continue;
    }
    absl::CommandLineFlag* flag = absl::FindCommandLineFlag(name);
    std::string flag_name = name;
    if ((flag == nullptr || !allowed(*flag)) && absl::StartsWith(name, "no") && !value) {
      // --noexplain: a bool flag set to false.
      absl::CommandLineFlag* positive = absl::FindCommandLineFlag(name.substr(2));
      if (positive != nullptr && allowed(*positive) && positive->IsOfType<bool>()) {
        flag = positive;
        flag_name = name.substr(2);
        value = "false";
      }
    }
    if (flag == nullptr || !allowed(*flag)) {
      unknown = name;
      fail("unknown flag");
      continue;
    }
    if (!value && flag->IsOfType<bool>()) value = "true";
    if (!take_value()) continue;
    std::string error;
    if (!flag->ParseFrom(*value, &error)) {
      fail(absl::StrCat("bad value ", QuotedInput(*value), " for --", flag_name, ": expected ",
                        Expected(*flag)));
      continue;
    }
    out->given.insert(flag_name);
  }
  if (!unknown.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("unknown flag --", Abbreviated(unknown, kMaxQuotedChars), "; see `sbp help",
                     out->command.empty() ? "" : " ", out->command, "`"));
  }
  return first_error;
}

}  // namespace oneflow_sbp::cli
