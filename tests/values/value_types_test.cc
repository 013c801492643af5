// String round trips, equality, ordering, hashing and input errors of the
// small value types: SbpParallel, NdSbp, Shape and DataType.
#include <algorithm>
#include <cstdint>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/hash/hash.h"
#include "absl/hash/hash_testing.h"
#include "absl/status/status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "oneflow_sbp/values/data_type.h"
#include "oneflow_sbp/values/nd_sbp.h"
#include "oneflow_sbp/values/nd_sbp_validation.h"
#include "oneflow_sbp/values/sbp_parallel.h"
#include "oneflow_sbp/values/shape.h"
#include "tests/support/status_matchers.h"
#include "tests/support/value_test_util.h"

using ::oneflow_sbp::matchers::StatusIs;

namespace oneflow_sbp {
namespace {

using ::testing::HasSubstr;

using testing::Nd;

// ---------------------------------------------------------------- SbpParallel

TEST(SbpParallelTest, ParsePrintRoundTrip) {
  for (const std::string text : {"B", "P", "P(max)", "P(min)", "S(0)", "S(1)", "S(7)", "S(31)",
                                 "S(250)"}) {
    absl::StatusOr<SbpParallel> sbp = SbpParallel::Parse(text);
    ASSERT_TRUE(sbp.ok()) << text << ": " << sbp.status();
    EXPECT_EQ(sbp->ToString(), text);
    EXPECT_EQ(*SbpParallel::Parse(sbp->ToString()), *sbp);
  }
}

TEST(SbpParallelTest, ParseValues) {
  EXPECT_EQ(*SbpParallel::Parse("B"), SbpParallel::Broadcast());
  EXPECT_EQ(*SbpParallel::Parse("P"), SbpParallel::PartialSum());
  EXPECT_EQ(*SbpParallel::Parse(" S(2)\t"), SbpParallel::Split(2));
  EXPECT_EQ(*SbpParallel::Parse("S(00)"), SbpParallel::Split(0));
  EXPECT_NE(*SbpParallel::Parse("S(1)"), SbpParallel::Split(0));
}

// P(max)/P(min) (the planned policy's extended partials): partials, not
// splits, above every split in the order, kinds kept apart, and an NdSbp
// that mixes kinds is refused by validation.
TEST(SbpParallelTest, PartialKinds) {
  const SbpParallel mx = SbpParallel::PartialMax();
  const SbpParallel mn = SbpParallel::PartialMin();
  EXPECT_TRUE(mx.is_partial() && mx.is_partial_max() && !mx.is_partial_sum() && !mx.is_split());
  EXPECT_TRUE(mn.is_partial() && mn.is_partial_min() && !mn.is_broadcast());
  EXPECT_TRUE(SbpParallel::PartialSum().is_partial());
  EXPECT_FALSE(SbpParallel::Split(SbpParallel::kMaxSplitAxis).is_partial());
  EXPECT_EQ(mx.partial_kind(), PartialKind::kMax);
  EXPECT_EQ(mn.partial_kind(), PartialKind::kMin);
  EXPECT_EQ(SbpParallel::PartialSum().partial_kind(), PartialKind::kSum);
  EXPECT_EQ(SbpParallel::Partial(PartialKind::kMin), mn);
  EXPECT_LT(SbpParallel::Split(SbpParallel::kMaxSplitAxis), mn);
  EXPECT_LT(mn, mx);
  const NdSbp nd = Nd("(P(max), S(0))");
  EXPECT_TRUE(nd.any_partial());
  EXPECT_FALSE(nd.any_partial_sum());
  EXPECT_EQ(nd.partial_kind(), PartialKind::kMax);
  EXPECT_EQ(Nd("(B, S(0))").partial_kind(), std::nullopt);
  EXPECT_TRUE(ValidateNdSbp(Nd("(P(max), P(max))"), Shape{4, 4}, {2, 2}).ok());
  const absl::Status mixed = ValidateNdSbp(Nd("(P(max), P)"), Shape{4, 4}, {2, 2});
  EXPECT_THAT(mixed, StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(std::string(mixed.message()), HasSubstr("mixes partial kinds (max and sum)"));
}

TEST(SbpParallelTest, Kinds) {
  const SbpParallel s = SbpParallel::Split(3);
  EXPECT_TRUE(s.is_split());
  EXPECT_FALSE(s.is_broadcast() || s.is_partial_sum() || s.is_unset());
  EXPECT_EQ(s.split_axis(), 3);
  EXPECT_TRUE(SbpParallel::Broadcast().is_broadcast());
  EXPECT_FALSE(SbpParallel::Broadcast().is_split());
  EXPECT_TRUE(SbpParallel::PartialSum().is_partial_sum());
  const SbpParallel unset;
  EXPECT_TRUE(unset.is_unset());
  EXPECT_FALSE(unset.is_split() || unset.is_broadcast() || unset.is_partial_sum());
  EXPECT_EQ(unset.ToString(), "unset");
}

TEST(SbpParallelTest, CodesAndOrder) {
  EXPECT_EQ(SbpParallel().code(), 0);
  EXPECT_EQ(SbpParallel::Broadcast().code(), 1);
  EXPECT_EQ(SbpParallel::PartialSum().code(), 2);
  EXPECT_EQ(SbpParallel::Split(0).code(), 3);
  EXPECT_EQ(SbpParallel::Split(5).code(), 8);
  EXPECT_EQ(SbpParallel::FromCode(8), SbpParallel::Split(5));
  EXPECT_LT(SbpParallel::Broadcast(), SbpParallel::PartialSum());
  EXPECT_LT(SbpParallel::PartialSum(), SbpParallel::Split(0));
  EXPECT_LT(SbpParallel::Split(0), SbpParallel::Split(1));
  EXPECT_FALSE(SbpParallel::Split(1) < SbpParallel::Split(1));
}

TEST(SbpParallelTest, BadTextIsInvalidArgumentNamingIt) {
  for (const std::string text :
       {"S(-1)", "S(x)", "Q", "s(0)", "S( 0)", "S()", "S(0", "S0", "BP", "b", "S(+1)",
        "S(1.5)", "S(253)", "S(999999999)"}) {
    absl::StatusOr<SbpParallel> sbp = SbpParallel::Parse(text);
    ASSERT_FALSE(sbp.ok()) << text << " parsed as " << sbp->ToString();
    EXPECT_THAT(sbp, StatusIs(absl::StatusCode::kInvalidArgument)) << text;
    // The axis-range error names the axis as S(<n>); the others quote the text.
    EXPECT_THAT(std::string(sbp.status().message()), HasSubstr(text)) << text;
  }
  absl::StatusOr<SbpParallel> empty = SbpParallel::Parse("");
  ASSERT_FALSE(empty.ok());
  EXPECT_THAT(empty, StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(std::string(empty.status().message()), HasSubstr("''"));
}

// OneFlow's and DTensor's spellings read as ours and print canonically.
TEST(SbpParallelTest, UsersSpellingsParseToOurs) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"split(0)", "S(0)"},
      {"split(dim=2)", "S(2)"},
      {"split(axis = 1)", "S(1)"},
      {"flow.sbp.split(1)", "S(1)"},
      {"oneflow.sbp.split(0)", "S(0)"},
      {"sbp.broadcast", "B"},
      {"flow.sbp.broadcast", "B"},
      {"broadcast()", "B"},
      {"partial_sum", "P"},
      {"flow.sbp.partial_sum", "P"},
      {"Shard(0)", "S(0)"},
      {"Shard(dim=3)", "S(3)"},
      {"torch.distributed.tensor.Shard(1)", "S(1)"},
      {"Replicate()", "B"},
      {"Replicate", "B"},
      {"Partial()", "P"},
      {"Partial('sum')", "P"},
      {"Partial(\"sum\")", "P"},
      {"Partial(reduce_op=\"sum\")", "P"},
      {"P(sum)", "P"},
      {"partial_max", "P(max)"},
      {"flow.sbp.partial_min", "P(min)"},
      {"Partial('max')", "P(max)"},
      {"torch.distributed.tensor.Partial(reduce_op=\"min\")", "P(min)"},
      {"  Shard( 2 )  ", "S(2)"},
  };
  for (const auto& [text, canonical] : cases) {
    absl::StatusOr<SbpParallel> sbp = SbpParallel::Parse(text);
    ASSERT_TRUE(sbp.ok()) << text << ": " << sbp.status();
    EXPECT_EQ(sbp->ToString(), canonical) << text;
  }
}

TEST(SbpParallelTest, UsersSpellingsWithBadArgumentsAreInvalidArgument) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"split(-1)", "a negative dim needs the tensor's rank"},
      {"Shard()", "Shard takes a non-negative dim"},
      {"split(x)", "split takes a non-negative dim"},
      {"Shard(dim=)", "Shard takes a non-negative dim"},
      {"Partial('avg')", "a partial reduces by sum, max or min, not 'avg'"},
      {"partial_max(0)", "partial_max takes no arguments"},
      {"Replicate(0)", "Replicate takes no arguments"},
      {"broadcast(1)", "broadcast takes no arguments"},
      {"Shard(0", "missing ')'"},
      {"Shard(251)", "split axis must be in [0, 250]"},
      {"shard(0)", "or DTensor's Replicate(), Partial(), Partial(\"max\"), Shard(0)"},
      {"flow.sbp.spilt(0)", "expected B, P, P(max), P(min) or S(<axis>)"},
      {"P(avg)", "expected B, P, P(max), P(min) or S(<axis>)"},
      {"P(max)P(min)", "missing ',' after P(max)"},
  };
  for (const auto& [text, why] : cases) {
    absl::StatusOr<SbpParallel> sbp = SbpParallel::Parse(text);
    ASSERT_FALSE(sbp.ok()) << text << " parsed as " << sbp->ToString();
    EXPECT_THAT(sbp, StatusIs(absl::StatusCode::kInvalidArgument)) << text;
    EXPECT_THAT(std::string(sbp.status().message()), HasSubstr(why)) << text;
  }
}

TEST(SbpParallelTest, MakeSplitRange) {
  EXPECT_EQ(*SbpParallel::MakeSplit(0), SbpParallel::Split(0));
  EXPECT_EQ(*SbpParallel::MakeSplit(SbpParallel::kMaxSplitAxis),
            SbpParallel::Split(SbpParallel::kMaxSplitAxis));
  for (int64_t axis : {int64_t{-1}, int64_t{SbpParallel::kMaxSplitAxis + 1},
                       int64_t{1} << 40, std::numeric_limits<int64_t>::min()}) {
    absl::StatusOr<SbpParallel> s = SbpParallel::MakeSplit(axis);
    ASSERT_FALSE(s.ok()) << axis;
    EXPECT_THAT(s, StatusIs(absl::StatusCode::kInvalidArgument));
    EXPECT_THAT(std::string(s.status().message()),
                HasSubstr("S(" + std::to_string(axis) + ")"));
  }
}

TEST(SbpParallelTest, Hashing) {
  EXPECT_TRUE(absl::VerifyTypeImplementsAbslHashCorrectly(
      {SbpParallel(), SbpParallel::Broadcast(), SbpParallel::PartialSum(),
       SbpParallel::Split(0), SbpParallel::Split(1), SbpParallel::Split(250),
       SbpParallel::PartialMax(), SbpParallel::PartialMin()}));
  EXPECT_EQ(absl::Hash<SbpParallel>{}(*SbpParallel::Parse(" S(4) ")),
            absl::Hash<SbpParallel>{}(SbpParallel::Split(4)));
  absl::flat_hash_set<SbpParallel> set;
  for (const char* t : {"B", "P", "S(0)", "S(1)", " B", "S(00)", "S(1) "}) {
    set.insert(*SbpParallel::Parse(t));
  }
  EXPECT_EQ(set.size(), 4u);
}

// ---------------------------------------------------------------------- NdSbp

struct NdForms {
  const char* input;
  const char* canonical;
  const char* long_form;
  int size;
};

TEST(NdSbpTest, CompactAndLongFormsRoundTrip) {
  const NdForms kCases[] = {
      {"(S(0), B)", "(S(0), B)", "S(0),B", 2},
      {"(S(0),B)", "(S(0), B)", "S(0),B", 2},
      {"S(0),B", "(S(0), B)", "S(0),B", 2},
      {"S(0)", "(S(0))", "S(0)", 1},
      {"(S(0))", "(S(0))", "S(0)", 1},
      {"B", "(B)", "B", 1},
      {"P", "(P)", "P", 1},
      {" ( P , S(2) , B ) ", "(P, S(2), B)", "P,S(2),B", 3},
      {"B,B,B,B,B,B,B,S(7)", "(B, B, B, B, B, B, B, S(7))", "B,B,B,B,B,B,B,S(7)", 8},
  };
  for (const NdForms& c : kCases) {
    absl::StatusOr<NdSbp> nd = NdSbp::Parse(c.input);
    ASSERT_TRUE(nd.ok()) << c.input << ": " << nd.status();
    EXPECT_EQ(nd->size(), c.size) << c.input;
    EXPECT_EQ(nd->ToString(), c.canonical) << c.input;
    EXPECT_EQ(nd->ToLongString(), c.long_form) << c.input;
    EXPECT_EQ(Nd(nd->ToString()), *nd) << c.input;
    EXPECT_EQ(Nd(nd->ToLongString()), *nd) << c.input;
  }
}

TEST(NdSbpTest, EntriesAndPredicates) {
  const NdSbp nd = Nd("(S(1), P, B)");
  EXPECT_EQ(nd[0], SbpParallel::Split(1));
  EXPECT_EQ(nd[1], SbpParallel::PartialSum());
  EXPECT_EQ(nd[2], SbpParallel::Broadcast());
  EXPECT_TRUE(nd.any_partial_sum());
  EXPECT_FALSE(nd.all_broadcast());
  EXPECT_FALSE(nd.any_unset());
  EXPECT_TRUE(Nd("B,B").all_broadcast());
  EXPECT_FALSE(Nd("B,B").any_partial_sum());
  EXPECT_TRUE((NdSbp{SbpParallel::Broadcast(), SbpParallel()}).any_unset());
  EXPECT_EQ(NdSbp::Repeat(SbpParallel::Broadcast(), 2), Nd("(B, B)"));
  EXPECT_EQ(NdSbp::Repeat(SbpParallel::Split(0), 3).ToString(), "(S(0), S(0), S(0))");

  const NdSbp empty;
  EXPECT_TRUE(empty.empty());
  EXPECT_EQ(empty.ToString(), "()");
  EXPECT_EQ(empty.ToLongString(), "");
}

TEST(NdSbpTest, SetAndPushBackKeepCanonicalKey) {
  NdSbp nd = Nd("(S(3), P)");
  nd.set(0, SbpParallel::Broadcast());
  EXPECT_EQ(nd, Nd("(B, P)"));
  EXPECT_EQ(nd.packed(), Nd("(B, P)").packed());
  EXPECT_EQ(absl::Hash<NdSbp>{}(nd), absl::Hash<NdSbp>{}(Nd("B,P")));
  nd.push_back(SbpParallel::Split(0));
  EXPECT_EQ(nd.ToString(), "(B, P, S(0))");
  EXPECT_EQ(nd.packed(), uint64_t{0x030201});
}

TEST(NdSbpTest, Equality) {
  EXPECT_EQ(Nd("(S(0), B)"), (NdSbp{SbpParallel::Split(0), SbpParallel::Broadcast()}));
  EXPECT_NE(Nd("(S(0), B)"), Nd("(B, S(0))"));
  EXPECT_NE(Nd("(S(0), B)"), Nd("(S(1), B)"));
  EXPECT_NE(Nd("(B)"), Nd("(B, B)"));
  // Same packed word (unset trailing entries are zero) but different lengths.
  EXPECT_NE(Nd("(B)"), (NdSbp{SbpParallel::Broadcast(), SbpParallel()}));
}

TEST(NdSbpTest, OrderIsShorterFirstThenEntriesFromAxisZero) {
  std::vector<NdSbp> v;
  for (const char* t : {"(B, B)", "(S(0))", "(P, B)", "(B)", "(B, S(1))", "(B, S(0))",
                        "(S(0), B)", "(P)", "(S(1), S(0))", "(B, P)"}) {
    v.push_back(Nd(t));
  }
  std::sort(v.begin(), v.end());
  std::vector<std::string> got;
  for (const NdSbp& nd : v) got.push_back(nd.ToString());
  EXPECT_THAT(got, ::testing::ElementsAre("(B)", "(P)", "(S(0))", "(B, B)", "(B, P)",
                                          "(B, S(0))", "(B, S(1))", "(P, B)",
                                          "(S(0), B)", "(S(1), S(0))"));
  EXPECT_FALSE(Nd("(B, P)") < Nd("(B, P)"));
}

TEST(NdSbpTest, Hashing) {
  EXPECT_TRUE(absl::VerifyTypeImplementsAbslHashCorrectly(
      {NdSbp(), Nd("B"), Nd("P"), Nd("(B, B)"), Nd("(S(0), B)"), Nd("(B, S(0))"),
       NdSbp{SbpParallel::Broadcast(), SbpParallel()}, Nd("S(1),S(1),S(1)")}));
  const absl::Hash<NdSbp> hash;
  EXPECT_EQ(hash(Nd("(S(0), B)")), hash(Nd("S(0),B")));
  EXPECT_EQ(hash(Nd("(S(0), B)")),
            hash(NdSbp{SbpParallel::Split(0), SbpParallel::Broadcast()}));
  absl::flat_hash_set<NdSbp> set;
  for (const char* t : {"(S(0), B)", "S(0),B", "(S(0),B)", "(B, S(0))", "B,S(0)",
                        "(B)", "B", "(B, B)"}) {
    set.insert(Nd(t));
  }
  EXPECT_EQ(set.size(), 4u);
}

TEST(NdSbpTest, BadTextIsInvalidArgumentNamingIt) {
  for (const std::string text : {"", "()", "  ", "( )", "(S(0), B", "S(0),,B", "(S(-1))",
                                 "S(-1)", "S(x),B", "Q", "(S(0), Q)", "S(0);B",
                                 "((S(0)))", "S(0) B"}) {
    absl::StatusOr<NdSbp> nd = NdSbp::Parse(text);
    ASSERT_FALSE(nd.ok()) << "'" << text << "' parsed as " << nd->ToString();
    EXPECT_THAT(nd, StatusIs(absl::StatusCode::kInvalidArgument)) << text;
    EXPECT_THAT(std::string(nd.status().message()), HasSubstr("'" + text + "'"));
  }
}

TEST(NdSbpTest, ListsAndUsersSpellingsParseToOurs) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"[S(0), B]", "(S(0), B)"},
      {"[Shard(0), Replicate()]", "(S(0), B)"},
      {"(flow.sbp.split(0), flow.sbp.broadcast)", "(S(0), B)"},
      {"[Partial(reduce_op=\"sum\"), Shard(dim=1)]", "(P, S(1))"},
      {"split(1)", "(S(1))"},
      {"[B]", "(B)"},
      {"[Partial('max'), Shard(0)]", "(P(max), S(0))"},
      {"(P(min),B)", "(P(min), B)"},
  };
  for (const auto& [text, canonical] : cases) {
    absl::StatusOr<NdSbp> nd = NdSbp::Parse(text);
    ASSERT_TRUE(nd.ok()) << text << ": " << nd.status();
    EXPECT_EQ(nd->ToString(), canonical) << text;
  }
  for (const std::string text : {"[S(0), B", "[]", "[Shard(0),, B]", "[Partial('avg'), B]"}) {
    absl::StatusOr<NdSbp> nd = NdSbp::Parse(text);
    ASSERT_FALSE(nd.ok()) << text << " parsed as " << nd->ToString();
    EXPECT_THAT(nd, StatusIs(absl::StatusCode::kInvalidArgument)) << text;
    EXPECT_THAT(std::string(nd.status().message()), HasSubstr(text)) << text;
  }
}

TEST(NdSbpTest, TooManyAxesIsInvalidArgument) {
  const std::string nine = "S(0),S(0),S(0),S(0),S(0),S(0),S(0),S(0),S(0)";
  absl::StatusOr<NdSbp> nd = NdSbp::Parse(nine);
  ASSERT_FALSE(nd.ok());
  EXPECT_THAT(nd, StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(std::string(nd.status().message()), HasSubstr("9"));

  std::vector<SbpParallel> sbps(9, SbpParallel::Broadcast());
  absl::StatusOr<NdSbp> made = NdSbp::Make(sbps);
  ASSERT_FALSE(made.ok());
  EXPECT_THAT(made, StatusIs(absl::StatusCode::kInvalidArgument));
  sbps.pop_back();
  ASSERT_TRUE(NdSbp::Make(sbps).ok());
  EXPECT_EQ(NdSbp::Make(sbps)->size(), 8);
}

// Too many entries: the message names the text.
TEST(NdSbpTest, TooManyAxesMessageNamesTheText) {
  const std::string nine = "(B, B, B, B, B, B, B, B, P)";
  absl::StatusOr<NdSbp> nd = NdSbp::Parse(nine);
  ASSERT_FALSE(nd.ok());
  EXPECT_THAT(std::string(nd.status().message()), HasSubstr(nine));
}

// ---------------------------------------------------------------------- Shape

TEST(ShapeTest, ParseForms) {
  struct Case {
    const char* text;
    const char* canonical;
    int rank;
    int64_t elem_cnt;
  };
  const Case kCases[] = {
      {"[10,6]", "[10,6]", 2, 60},     {"10,6", "[10,6]", 2, 60},
      {"(10, 6)", "[10,6]", 2, 60},    {" [ 64 , 32 ] ", "[64,32]", 2, 2048},
      {"7", "[7]", 1, 7},              {"[]", "[]", 0, 1},
      {"2,3,4", "[2,3,4]", 3, 24},     {"[9223372036854775807]", "[9223372036854775807]", 1,
                                        std::numeric_limits<int64_t>::max()},
  };
  for (const Case& c : kCases) {
    absl::StatusOr<Shape> s = Shape::Parse(c.text);
    ASSERT_TRUE(s.ok()) << c.text << ": " << s.status();
    EXPECT_EQ(s->ToString(), c.canonical) << c.text;
    EXPECT_EQ(s->rank(), c.rank) << c.text;
    EXPECT_EQ(s->elem_cnt(), c.elem_cnt) << c.text;
    EXPECT_EQ(*Shape::Parse(s->ToString()), *s) << c.text;
  }
  const Shape s = *Shape::Parse("10,6");
  EXPECT_EQ(s.dim(0), 10);
  EXPECT_EQ(s[1], 6);
  EXPECT_THAT(s.dims(), ::testing::ElementsAre(10, 6));
  EXPECT_EQ(s, (Shape{10, 6}));
  EXPECT_NE(s, (Shape{6, 10}));
  EXPECT_EQ(Shape(), *Shape::Parse("[]"));
  EXPECT_EQ(Shape().ToString(), "[]");
}

TEST(ShapeTest, BadTextIsInvalidArgumentNamingTheValue) {
  struct Case {
    const char* text;
    const char* needle;
  };
  const Case kCases[] = {
      {"0", "extent 0"},
      {"10,0", "extent 0"},
      {"-1", "extent -1"},
      {"10,-3", "extent -3"},
      {"[10,6", "[10,6"},
      {"(10,6", "(10,6"},
      {"10,,6", "10,,6"},
      {"10,x", "'x'"},
      {"10.5", "10.5"},
      {"4294967296,4294967296", "4294967296,4294967296"},
      {"3037000500,3037000500", "overflows"},
  };
  for (const Case& c : kCases) {
    absl::StatusOr<Shape> s = Shape::Parse(c.text);
    ASSERT_FALSE(s.ok()) << c.text << " parsed as " << s->ToString();
    EXPECT_THAT(s, StatusIs(absl::StatusCode::kInvalidArgument)) << c.text;
    EXPECT_THAT(std::string(s.status().message()), HasSubstr(c.needle)) << c.text;
  }
}

TEST(ShapeTest, MakeLimits) {
  EXPECT_TRUE(Shape::Make(std::vector<int64_t>{3037000499, 3037000499}).ok());
  absl::StatusOr<Shape> overflow =
      Shape::Make(std::vector<int64_t>{4294967296, 4294967296});
  ASSERT_FALSE(overflow.ok());
  EXPECT_THAT(overflow, StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(std::string(overflow.status().message()), HasSubstr("overflows int64"));

  EXPECT_TRUE(Shape::Make(std::vector<int64_t>(Shape::kMaxRank, 1)).ok());
  absl::StatusOr<Shape> too_long = Shape::Make(std::vector<int64_t>(Shape::kMaxRank + 1, 1));
  ASSERT_FALSE(too_long.ok());
  EXPECT_THAT(too_long, StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(std::string(too_long.status().message()), HasSubstr("rank 33"));

  absl::StatusOr<Shape> negative = Shape::Make(std::vector<int64_t>{4, -2});
  ASSERT_FALSE(negative.ok());
  EXPECT_THAT(std::string(negative.status().message()), HasSubstr("-2"));
}

TEST(ShapeTest, CheckedByteSize) {
  EXPECT_EQ(*CheckedByteSize(Shape{10, 6}, 4), 240);
  EXPECT_EQ(*CheckedByteSize(Shape(), 8), 8);
  const Shape big{int64_t{1} << 61};
  EXPECT_EQ(*CheckedByteSize(big, 3), 3 * (int64_t{1} << 61));
  absl::StatusOr<int64_t> overflow = CheckedByteSize(big, 4);
  ASSERT_FALSE(overflow.ok());
  EXPECT_THAT(overflow, StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(std::string(overflow.status().message()), HasSubstr(big.ToString()));
}

TEST(ShapeTest, Hashing) {
  EXPECT_TRUE(absl::VerifyTypeImplementsAbslHashCorrectly(
      {Shape(), Shape{1}, Shape{10, 6}, Shape{6, 10}, Shape{10, 6, 1}, Shape{60}}));
  EXPECT_EQ(absl::Hash<Shape>{}(*Shape::Parse("(10, 6)")),
            absl::Hash<Shape>{}(Shape{10, 6}));
}

// ------------------------------------------------------------------- DataType

TEST(DataTypeTest, NamesSizesAndRoundTrip) {
  struct Case {
    DataType dtype;
    const char* name;
    int bytes;
  };
  const Case kCases[] = {
      {DataType::kFloat16, "f16", 2}, {DataType::kBFloat16, "bf16", 2},
      {DataType::kFloat32, "f32", 4}, {DataType::kFloat64, "f64", 8},
      {DataType::kInt8, "i8", 1},     {DataType::kInt32, "i32", 4},
      {DataType::kInt64, "i64", 8},   {DataType::kUInt8, "u8", 1},
      {DataType::kBool, "bool", 1},
  };
  static_assert(sizeof(kCases) / sizeof(kCases[0]) == kNumDataTypes);
  for (const Case& c : kCases) {
    EXPECT_EQ(DataTypeName(c.dtype), c.name);
    EXPECT_EQ(ByteSizeOf(c.dtype), c.bytes) << c.name;
    absl::StatusOr<DataType> parsed = ParseDataType(c.name);
    ASSERT_TRUE(parsed.ok()) << c.name << ": " << parsed.status();
    EXPECT_EQ(*parsed, c.dtype) << c.name;
  }
}

TEST(DataTypeTest, Aliases) {
  EXPECT_EQ(*ParseDataType("float32"), DataType::kFloat32);
  EXPECT_EQ(*ParseDataType("float"), DataType::kFloat32);
  EXPECT_EQ(*ParseDataType("F32"), DataType::kFloat32);
  EXPECT_EQ(*ParseDataType(" f64 "), DataType::kFloat64);
  EXPECT_EQ(*ParseDataType("double"), DataType::kFloat64);
  EXPECT_EQ(*ParseDataType("half"), DataType::kFloat16);
  EXPECT_EQ(*ParseDataType("float16"), DataType::kFloat16);
  EXPECT_EQ(*ParseDataType("bfloat16"), DataType::kBFloat16);
  EXPECT_EQ(*ParseDataType("int64"), DataType::kInt64);
  EXPECT_EQ(*ParseDataType("int32"), DataType::kInt32);
  EXPECT_EQ(*ParseDataType("int8"), DataType::kInt8);
  EXPECT_EQ(*ParseDataType("uint8"), DataType::kUInt8);
}

TEST(DataTypeTest, UnknownIsInvalidArgumentNamingIt) {
  for (const std::string text : {"f128", "complex64", "int", "f 32", "", "S(0)"}) {
    absl::StatusOr<DataType> d = ParseDataType(text);
    ASSERT_FALSE(d.ok()) << "'" << text << "' parsed as " << DataTypeName(*d);
    EXPECT_THAT(d, StatusIs(absl::StatusCode::kInvalidArgument)) << text;
    EXPECT_THAT(std::string(d.status().message()), HasSubstr("'" + text + "'"));
  }
}

}  // namespace
}  // namespace oneflow_sbp
