// The tool's flag table and typed values (cli/flags.h), and the command
// line parsed against them once (cli/command_line.h): the header's
// example, defaults, wrong types as exit-2 errors naming the flag, bool
// forms, and the order a command's error names given flags in.
#include <string>
#include <vector>

#include "cli/command_line.h"
#include "cli/flags.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/support/status_matchers.h"

namespace oneflow_sbp::cli {
namespace {

using ::oneflow_sbp::matchers::StatusIs;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(Flags, TheHeadersExample) {
  FlagValues v;
  ASSERT_TRUE(v.Set(*FindFlag("nproc"), "4").ok());
  EXPECT_THAT(v.Set(*FindFlag("nproc"), "four"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("bad value 'four' for --nproc: expected an integer")));
  EXPECT_EQ(v.Int("nproc"), 4);
  EXPECT_EQ(v.Int("nnodes"), 1);
  EXPECT_EQ(v.Text("placement"), std::nullopt);
}

TEST(Flags, EveryFlagIsOnceInTheTableAndItsDefaultIsOfItsType) {
  std::vector<std::string> names;
  for (const FlagSpec& f : AllFlags()) {
    EXPECT_EQ(FindFlag(f.name), &f) << f.name << " is in the table twice";
    EXPECT_STRNE(f.help, "") << f.name;
    if (f.default_value != nullptr) {
      FlagValues v;
      EXPECT_TRUE(v.Set(f, f.default_value).ok()) << "--" << f.name << "'s default";
    }
  }
  EXPECT_EQ(FindFlag("flagfile"), nullptr);
}

TEST(Flags, TypedValuesAndDefaults) {
  FlagValues v;
  EXPECT_EQ(v.String("format"), "text");
  EXPECT_EQ(v.String("model"), "");
  EXPECT_FALSE(v.Bool("explain"));
  EXPECT_EQ(v.Int64("hidden"), 64);
  EXPECT_EQ(v.Uint64("seed"), 1u);
  EXPECT_EQ(v.Double("timeout"), 0);
  EXPECT_EQ(v.OptionalInt("repeat"), std::nullopt);
  EXPECT_FALSE(v.given("format"));
  ASSERT_TRUE(v.Set(*FindFlag("timeout"), "2.5").ok());
  ASSERT_TRUE(v.Set(*FindFlag("seed"), "18446744073709551615").ok());
  ASSERT_TRUE(v.Set(*FindFlag("repeat"), "0").ok());
  ASSERT_TRUE(v.Set(*FindFlag("placement"), "cpu:0-3").ok());
  EXPECT_EQ(v.Double("timeout"), 2.5);
  EXPECT_EQ(v.Uint64("seed"), 18446744073709551615u);
  EXPECT_EQ(v.OptionalInt("repeat"), 0);
  EXPECT_EQ(v.Text("placement"), "cpu:0-3");
  EXPECT_TRUE(v.given("placement"));
  EXPECT_THAT(v.Set(*FindFlag("seed"), "-1"), StatusIs(absl::StatusCode::kInvalidArgument,
                                                       HasSubstr("a non-negative integer")));
  EXPECT_THAT(v.Set(*FindFlag("nproc"), "99999999999"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("expected an integer")));
  EXPECT_THAT(v.Set(*FindFlag("timeout"), "soon"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("expected a number")));
  EXPECT_THAT(v.Set(*FindFlag("explain"), "maybe"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("expected true or false")));
  // A value that did not parse leaves the last good one.
  EXPECT_EQ(v.Double("timeout"), 2.5);
}

TEST(CommandLine, ParsesOnceIntoTypedValues) {
  CommandLine cl;
  ASSERT_TRUE(ParseCommandLine({"boxing", "--nproc", "4", "--explain", "--noexplain",
                                "--placement=cpu:0-3", "--input=f32[4]:S(0)", "-timeout=3",
                                "--", "--not-a-flag"},
                               &cl)
                  .ok());
  EXPECT_EQ(cl.command, "boxing");
  EXPECT_EQ(cl.flags.Int("nproc"), 4);
  EXPECT_FALSE(cl.flags.Bool("explain"));
  EXPECT_EQ(cl.flags.Double("timeout"), 3);
  EXPECT_THAT(cl.input, ElementsAre("f32[4]:S(0)"));
  EXPECT_THAT(cl.positional, ElementsAre("--not-a-flag"));
  // Each given flag once, in the order given.
  EXPECT_THAT(cl.given, ElementsAre("nproc", "explain", "placement", "input", "timeout"));
}

TEST(CommandLine, AWrongCommandLineNamesTheFlag) {
  CommandLine cl;
  EXPECT_THAT(ParseCommandLine({"boxing", "--nproc=abc"}, &cl),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("bad value 'abc' for --nproc: expected an integer")));
  EXPECT_EQ(cl.command, "boxing");
  cl = CommandLine();
  EXPECT_THAT(ParseCommandLine({"infer", "--nope=1"}, &cl),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("unknown flag --nope; see `sbp help infer`")));
  cl = CommandLine();
  EXPECT_THAT(ParseCommandLine({"infer", "--flagfile=/etc/passwd"}, &cl),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("--flagfile is not supported")));
  cl = CommandLine();
  EXPECT_THAT(ParseCommandLine({"infer", "--placement"}, &cl),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("--placement needs a value")));
  cl = CommandLine();
  EXPECT_THAT(ParseCommandLine({"demo", "--nosteps"}, &cl),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("unknown flag --nosteps")));
}

}  // namespace
}  // namespace oneflow_sbp::cli
