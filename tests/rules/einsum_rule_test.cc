// The einsum rule generator: matmul-like lists from one spec line, custom
// ops defined by an einsum, extent-1 letters, and malformed specs.
#include "ops/einsum_rule.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "oneflow_sbp/rule_api/op_registry.h"
#include "tests/support/infer_test_util.h"

namespace oneflow_sbp::testing {
namespace {

using ::testing::HasSubstr;

class EinsumTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const auto& [name, spec, inputs] :
         std::vector<std::tuple<std::string, std::string, std::vector<std::string>>>{
             {"es_matmul", "mk,kn->mn", {"a", "b"}},
             {"es_bmm", "bmk,bkn->bmn", {"a", "b"}},
             {"es_bilinear", "bi,ij,bj->b", {}},
             {"es_outer", "i,j->ij", {"x", "y"}},
             {"es_transpose", "ij->ji", {"x"}}}) {
      absl::StatusOr<OpDefBuilder> op = ops::EinsumOp(name, spec, inputs);
      ASSERT_TRUE(op.ok()) << op.status();
      ASSERT_TRUE(registry_.Register(*op).ok());
    }
  }
  std::string Candidates(const std::string& op, const std::vector<std::string>& inputs) {
    std::string out = CandidatesToString(op, inputs, {}, 2, &registry_);
    return out.rfind("error: ", 0) == 0 ? out.substr(7) : out;
  }
  OpRegistry registry_;
};

TEST_F(EinsumTest, MatmulSpecGivesOneFlowsMatmulList) {
  const std::string matmul = CandidatesToString("matmul", {"f32[8,4]", "f32[4,6]"});
  EXPECT_EQ(Candidates("es_matmul", {"f32[8,4]", "f32[4,6]"}), matmul);
  const std::string bmm = CandidatesToString("batch_matmul", {"f32[3,8,4]", "f32[3,4,6]"});
  EXPECT_EQ(Candidates("es_bmm", {"f32[3,8,4]", "f32[3,4,6]"}), bmm);
}

TEST_F(EinsumTest, CustomOpFromOneLine) {
  EXPECT_EQ(Candidates("es_bilinear", {"f32[8,4]", "f32[4,5]", "f32[8,5]"}),
            "in_0:S(0) in_1:B in_2:S(0) -> out_0:S(0) | "
            "in_0:S(1) in_1:S(0) in_2:B -> out_0:P | "
            "in_0:B in_1:S(1) in_2:S(1) -> out_0:P | "
            "in_0:P in_1:B in_2:B -> out_0:P | in_0:B in_1:P in_2:B -> out_0:P | "
            "in_0:B in_1:B in_2:P -> out_0:P");
  EXPECT_EQ(Candidates("es_outer", {"f32[3]", "f32[5]"}),
            "x_0:S(0) y_0:B -> out_0:S(0) | x_0:B y_0:S(0) -> out_0:S(1) | "
            "x_0:P y_0:B -> out_0:P | x_0:B y_0:P -> out_0:P");
  EXPECT_EQ(Candidates("es_transpose", {"f32[3,5]"}),
            "x_0:S(1) -> out_0:S(0) | x_0:S(0) -> out_0:S(1) | x_0:P -> out_0:P");
  // Full inference with the custom op: keep the batch split of in_0/in_2.
  InferSpec spec{"es_bilinear", "cpu:0-3 [2,2]",
                 {"f32[8,4]:(S(0),B)", "f32[4,5]:(B,B)", "f32[8,5]:(S(0),B)"}};
  spec.registry = &registry_;
  EXPECT_EQ(InferToString(spec), "in_0:(S(0),B) in_1:(B,B) in_2:(S(0),B) -> out_0:(S(0),B)");
}

TEST_F(EinsumTest, LettersOfExtentOneOfferNoSplit) {
  EXPECT_EQ(Candidates("es_matmul", {"f32[1,4]", "f32[4,6]"}),
            "a_0:B b_0:S(1) -> out_0:S(1) | a_0:S(1) b_0:S(0) -> out_0:P | "
            "a_0:P b_0:B -> out_0:P | a_0:B b_0:P -> out_0:P");
  EXPECT_EQ(Candidates("es_matmul", {"f32[8,1]", "f32[1,6]"}),
            "a_0:S(0) b_0:B -> out_0:S(0) | a_0:B b_0:S(1) -> out_0:S(1) | "
            "a_0:P b_0:B -> out_0:P | a_0:B b_0:P -> out_0:P");
}

// The matmul family takes its lists from the generator (ops/matmul_ops.cc)
// but keeps OneFlow's habit of listing m, k, n and batch_matmul's batch dims
// at any extent: the shape filter, not the rule, drops a split of a unit
// dim (and keeps it on a mesh axis of size 1). broadcast_matmul splits a
// batch dim only where an operand's extent is not 1, the other operand B.
TEST(MatmulFromEinsum, UnitLettersStayListedAsOneFlowListsThem) {
  EXPECT_EQ(CandidatesToString("matmul", {"f32[1,4]", "f32[4,1]"}, {}, 1),
            "a_0:S(0) b_0:B -> out_0:S(0) | a_0:B b_0:S(1) -> out_0:S(1) | "
            "a_0:S(1) b_0:S(0) -> out_0:P | a_0:P b_0:B -> out_0:P | a_0:B b_0:P -> out_0:P");
  EXPECT_EQ(CandidatesToString("matmul", {"f32[4,1]", "f32[6,4]"},
                               {"transpose_a=true", "transpose_b=true"}, 1),
            "a_0:S(1) b_0:B -> out_0:S(0) | a_0:B b_0:S(0) -> out_0:S(1) | "
            "a_0:S(0) b_0:S(1) -> out_0:P | a_0:P b_0:B -> out_0:P | a_0:B b_0:P -> out_0:P");
  EXPECT_EQ(CandidatesToString("batch_matmul", {"f32[1,2,3,4]", "f32[1,2,4,5]"}, {}, 1),
            "a_0:S(0) b_0:S(0) -> out_0:S(0) | a_0:S(1) b_0:S(1) -> out_0:S(1) | "
            "a_0:S(2) b_0:B -> out_0:S(2) | a_0:B b_0:S(3) -> out_0:S(3) | "
            "a_0:S(3) b_0:S(2) -> out_0:P | a_0:P b_0:B -> out_0:P | a_0:B b_0:P -> out_0:P");
  EXPECT_EQ(CandidatesToString("broadcast_matmul", {"f32[1,1,3,2,4]", "f32[6,1,4,5]"}, {}, 1),
            "a_0:B b_0:S(0) -> out_0:S(1) | a_0:S(2) b_0:B -> out_0:S(2) | "
            "a_0:S(3) b_0:B -> out_0:S(3) | a_0:B b_0:S(3) -> out_0:S(4) | "
            "a_0:S(4) b_0:S(2) -> out_0:P | a_0:P b_0:B -> out_0:P | a_0:B b_0:P -> out_0:P");
  // _add_to_output takes out's SBP in every candidate.
  EXPECT_EQ(CandidatesToString("matmul", {"f32[8,4]", "f32[4,6]", "f32[8,6]"}),
            "a_0:S(0) b_0:B _add_to_output_0:S(0) -> out_0:S(0) | "
            "a_0:B b_0:S(1) _add_to_output_0:S(1) -> out_0:S(1) | "
            "a_0:S(1) b_0:S(0) _add_to_output_0:P -> out_0:P | "
            "a_0:P b_0:B _add_to_output_0:P -> out_0:P | a_0:B b_0:P _add_to_output_0:P -> out_0:P");
}

TEST_F(EinsumTest, ShapeErrorsNameOperandsAndLetters) {
  EXPECT_THAT(Candidates("es_matmul", {"f32[8,4]", "f32[5,6]"}),
              HasSubstr("letter 'k' has extent 4 in operand 0 but 5 in operand 1 f32[5,6]"));
  EXPECT_THAT(Candidates("es_matmul", {"f32[8,4,2]", "f32[4,6]"}),
              HasSubstr("operand 0 'mk' has 2 letters but input f32[8,4,2] has rank 3"));
  EXPECT_THAT(Candidates("es_matmul", {"f32[8,4]", "f16[4,6]"}), HasSubstr("dtypes must match"));
}

TEST(EinsumParse, MalformedSpecs) {
  for (const auto& [spec, needle] : std::vector<std::pair<std::string, std::string>>{
           {"mk,kn", "exactly one '->'"},
           {"mk->m->k", "exactly one '->'"},
           {"m1,kn->mn", "has '1'; use letters only"},
           {"...k,kn->...n", "use letters only"},
           {"mk,kn->md", "output letter 'd' is in no operand"},
           {"ii->i", "repeats 'i' (diagonals are not supported)"},
           {"mk,,kn->mn", "empty operand"}}) {
    absl::StatusOr<ops::EinsumSpec> parsed = ops::ParseEinsum(spec);
    ASSERT_FALSE(parsed.ok()) << spec;
    EXPECT_THAT(std::string(parsed.status().message()), HasSubstr(needle)) << spec;
  }
  absl::StatusOr<OpDefBuilder> op = ops::EinsumOp("bad", "mk,kn->mn", {"only_one"});
  ASSERT_FALSE(op.ok());
  EXPECT_THAT(std::string(op.status().message()),
              HasSubstr("bad: 1 input names for 2 einsum operands"));
}

}  // namespace
}  // namespace oneflow_sbp::testing

namespace oneflow_sbp::testing {
namespace {

// The catalog's einsum op: one op for every equation (its attribute).
TEST(EinsumOp, TheEquationAttributeDrivesShapeAndRule) {
  // OneFlow's matmul list, blob names aside (a_0/b_0 there).
  EXPECT_EQ(CandidatesToString("einsum", {"f32[8,4]", "f32[4,6]"}, {"equation=mk,kn->mn"}),
            "in_0:S(0) in_1:B -> out_0:S(0) | in_0:B in_1:S(1) -> out_0:S(1) | "
            "in_0:S(1) in_1:S(0) -> out_0:P | in_0:P in_1:B -> out_0:P | in_0:B in_1:P -> out_0:P");
  EXPECT_EQ(OutputDescs("einsum", {"f32[2,8,4]", "f32[4,6]"}, {"equation=bmk,kn->bmn"}),
            "f32[2,8,6]");
  EXPECT_EQ(InferToString({"einsum", "cpu:0-3 [2,2]", {"f32[4,8,16]:(S(0),B)", "f32[16,32]:(B,S(1))"},
                           {"equation=bmk,kn->bmn"}}),
            "in_0:(S(0),B) in_1:(B,S(1)) -> out_0:(S(0),S(2))");
}

// An equation is user text: a NUL, an ANSI escape or a long tail reach the
// message escaped and cut, from the parser and from the catalog's op.
TEST(EinsumParse, EquationsInMessagesAreEscapedAndCut) {
  const std::string tail(2000, 'k');
  for (const auto& [spec, needle] : std::vector<std::pair<std::string, std::string>>{
           {std::string("x\x1b[2Jk,kn->xn"), "equation 'x\\x1b[2Jk,kn->xn': operand 'x\\x1b[2Jk' has '\\x1b'"},
           {std::string("mk\0,kn", 6) + tail, "equation 'mk\\x00,kn" + std::string(58, 'k') +
                                                 "...' (2006 characters) needs exactly one '->'"},
           {"mk,kn->m\x9b" + tail, "(2009 characters)"},
           {"mk,kn->\x7fn", "output '\\x7fn' has '\\x7f'"}}) {
    absl::StatusOr<ops::EinsumSpec> parsed = ops::ParseEinsum(spec);
    ASSERT_FALSE(parsed.ok()) << spec;
    const std::string m(parsed.status().message());
    EXPECT_THAT(m, HasSubstr(needle));
    EXPECT_LT(m.size(), 300u) << m;
    for (char c : m) EXPECT_FALSE(static_cast<unsigned char>(c) < 0x20 || c == 0x7f) << m;
    // A lone 0x9b byte is CSI to a terminal in 8-bit mode, like ESC [.
    EXPECT_EQ(m.find('\x9b'), std::string::npos) << m;
  }
  const std::string m = OutputDescs("einsum", {"f32[8,4]", "f32[4,6]"},
                                    {std::string("equation=mk,kn->\x1b[2J") + tail});
  EXPECT_THAT(m, HasSubstr("einsum: equation 'mk,kn->\\x1b[2Jkkk"));
  EXPECT_LT(m.size(), 400u) << m;
  for (char c : m) EXPECT_FALSE(static_cast<unsigned char>(c) < 0x20) << m;
}

TEST(EinsumOp, BadEquationsAndOperandsNameTheEquation) {
  EXPECT_THAT(OutputDescs("einsum", {"f32[8,4]", "f32[4,6]"}, {"equation=mk,kn"}),
              HasSubstr("einsum: equation 'mk,kn'"));
  EXPECT_THAT(OutputDescs("einsum", {"f32[8,4]"}, {"equation=mk,kn->mn"}),
              HasSubstr("2 operands; the call has 1 inputs"));
  EXPECT_THAT(OutputDescs("einsum", {"f32[8,4]", "f32[5,6]"}, {"equation=mk,kn->mn"}),
              HasSubstr("einsum: equation 'mk,kn->mn'"));
  EXPECT_THAT(OutputDescs("einsum", {"f32[8,4]", "f32[4,6]"}, {}), HasSubstr("equation"));
}

}  // namespace
}  // namespace oneflow_sbp::testing
