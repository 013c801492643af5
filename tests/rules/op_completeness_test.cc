// Every op of the catalog has one record (ops/records/*.toml) and each piece
// its record claims, so a new op without one is a test failure naming the op
// and the piece rather than a runtime error in someone's training step: its
// rule (the registry), its CPU kernel and (in a CUDA build) its CUDA kernel,
// its backward rule or the record's reason for none, a verifier recipe that
// makes a valid call, the candidates its rule appends after OneFlow's list
// (the record's `ours`, the rule's SbpContext::OursFollow()), and its
// registry aliases. The golden candidate line is
// op_catalog_test's.
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "eager/autograd.h"
#include "eager/backward_rules.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ops/builtin_ops.h"
#include "kernels/kernel_registry.h"
#include "kernels/verify/input_recipes.h"
#include "ops/op_record.h"
#include "tests/support/infer_test_util.h"

namespace oneflow_sbp {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ops::BackwardKind;
using ops::OpRecord;

// The registries a record is checked against; tests make broken ones.
struct Pieces {
  const OpRegistry* rules;
  const kernels::KernelRegistry* kernels;
  // Whether this build registers CUDA kernels at all (--config=cuda).
  bool cuda_build;
  bool (*has_backward)(absl::string_view op);
};

// "op <name>: <piece> ..." for each piece the record claims and the
// registries lack (or have although the record says not).
std::vector<std::string> MissingPieces(const OpRecord& r, const Pieces& p) {
  std::vector<std::string> missing;
  auto say = [&](const std::string& what) {
    missing.push_back(absl::StrCat("op ", r.name, " (", r.record_file, "): ", what));
  };
  std::shared_ptr<const OpDef> def = p.rules->Find(r.name);
  if (def == nullptr || def->type_name() != r.name) {
    say(absl::StrCat("no rule registered (the family's rules are in ", r.rules_file, ")"));
    return missing;
  }
  const bool cpu = p.kernels->Find(r.name, DeviceType::kCpu).ok();
  if (r.cpu_kernel != cpu) {
    say(r.cpu_kernel ? "the record says kernels has cpu, and there is no CPU kernel"
                     : "a CPU kernel exists; add cpu to the record's kernels");
  }
  if (p.cuda_build) {
    const bool cuda = p.kernels->Find(r.name, DeviceType::kCuda).ok();
    if (r.cuda_kernel != cuda) {
      say(r.cuda_kernel ? "the record says kernels has cuda, and there is no CUDA kernel"
                        : "a CUDA kernel exists; add cuda to the record's kernels");
    }
  }
  const bool backward = p.has_backward(r.name);
  if ((r.backward == BackwardKind::kRule) != backward) {
    say(backward ? absl::StrCat("a backward rule exists, and the record says backward = \"",
                                ops::BackwardKindName(r.backward), "\"")
                 : "the record says backward = \"rule\", and eager has no backward rule");
  }
  const kernels::InputRecipe recipe =
      r.recipe.has_value()
          ? kernels::InputRecipe{r.name, r.recipe->inputs, r.recipe->attrs}
          : kernels::DefaultInputRecipe(*def);
  absl::StatusOr<kernels::OpInputs> inputs = kernels::MakeOpInputs(def, recipe, 1);
  if (!inputs.ok()) {
    say(absl::StrCat(r.recipe.has_value() ? "its verifier recipe" : "the default verifier recipe",
                     " makes no valid call (give the record a recipe): ",
                     inputs.status().message()));
  } else {
    // Whether the rule appends candidates after OneFlow's list, as the
    // record's `ours` says (the `oneflow` policy keeps OneFlow's alone).
    absl::StatusOr<testing::CandidateParts> parts =
        testing::SplitCandidates(r.name, recipe.inputs, recipe.attrs);
    if (!parts.ok()) {
      say(absl::StrCat("its rule fails on the verifier recipe's call: ", parts.status().message()));
    } else if (parts->marked && r.ours.empty()) {
      say(absl::StrCat("its rule appends candidates OneFlow lacks (SbpContext::OursFollow(); here: ",
                       parts->ours.empty() ? "none for this call" : parts->ours,
                       "); the record's ours must say what they are"));
    } else if (!parts->marked && !r.ours.empty()) {
      say("the record's ours says the rule appends candidates after OneFlow's list, and the "
          "rule marks none (call SbpContext::OursFollow() before them)");
    }
  }
  for (const ops::OpAliasRecord& a : r.aliases) {
    if (!a.IsRegistryAlias()) continue;
    std::shared_ptr<const OpDef> aliased = p.rules->Find(a.name);
    if (aliased == nullptr || aliased->type_name() != r.name) {
      say(absl::StrCat("alias ", a.name, " is not registered for it"));
    }
  }
  return missing;
}

bool HasBuiltinBackward(absl::string_view op) { return eager::FindBackward(op) != nullptr; }

Pieces BuiltinPieces() {
  EXPECT_TRUE(eager::RegisterBuiltinBackwardRules().ok());
  const kernels::KernelRegistry& k = kernels::KernelRegistry::Global();
  return Pieces{&ops::BuiltinOpRegistry(), &k,
                !k.OpsWithKernels(DeviceType::kCuda).empty(), &HasBuiltinBackward};
}

TEST(OpCompleteness, EveryRecordHasEachPieceItClaims) {
  const Pieces pieces = BuiltinPieces();
  std::vector<std::string> missing;
  for (const OpRecord& r : ops::BuiltinOpRecords()) {
    for (std::string& m : MissingPieces(r, pieces)) missing.push_back(std::move(m));
  }
  EXPECT_TRUE(missing.empty()) << absl::StrJoin(missing, "\n");
}

TEST(OpCompleteness, EveryOpHasARecordAndEveryAliasComesFromOne) {
  const OpRegistry& catalog = ops::BuiltinOpRegistry();
  std::vector<std::string> without;
  for (const std::string& op : catalog.OpNames()) {
    if (ops::FindOpRecord(op) == nullptr) without.push_back(op);
  }
  EXPECT_TRUE(without.empty()) << "ops with no record in ops/records/*.toml: "
                               << absl::StrJoin(without, " ");
  EXPECT_EQ(ops::BuiltinOpRecords().size(), catalog.OpNames().size());
  int registry_aliases = 0;
  for (const OpRecord& r : ops::BuiltinOpRecords()) {
    for (const ops::OpAliasRecord& a : r.aliases) registry_aliases += a.IsRegistryAlias();
  }
  EXPECT_EQ(static_cast<int>(catalog.Aliases().size()), registry_aliases);
}

// A record that claims a piece the registries lack fails, naming the op and
// the piece; so does one that denies a piece that exists.
TEST(OpCompleteness, ARecordLackingAPieceIsNamed) {
  const Pieces pieces = BuiltinPieces();
  OpRecord r = *ops::FindOpRecord("gather");  // no backward rule yet
  r.backward = BackwardKind::kRule;
  EXPECT_THAT(MissingPieces(r, pieces),
              ElementsAre(HasSubstr("op gather (ops/records/indexing.toml): the record says "
                                    "backward = \"rule\", and eager has no backward rule")));
  r = *ops::FindOpRecord("rms_norm");
  r.backward = BackwardKind::kNotWrittenYet;
  r.recipe->inputs = {"f32[3,5,4]", "f32[7]"};
  r.aliases.push_back({"rmsnorm", {ops::Notation::kTorch}, {}});
  EXPECT_THAT(MissingPieces(r, pieces),
              ElementsAre(HasSubstr("a backward rule exists, and the record says backward = "
                                    "\"not written yet\""),
                          HasSubstr("its verifier recipe makes no valid call"),
                          HasSubstr("alias rmsnorm is not registered for it")));
  r = *ops::FindOpRecord("gather");
  r.ours.clear();
  EXPECT_THAT(MissingPieces(r, pieces),
              ElementsAre(HasSubstr("its rule appends candidates OneFlow lacks "
                                    "(SbpContext::OursFollow(); here: in_0:P indices_0:B -> "
                                    "out_0:P); the record's ours must say what they are")));
  r = *ops::FindOpRecord("relu");
  r.ours = "P -> P";
  EXPECT_THAT(MissingPieces(r, pieces),
              ElementsAre(HasSubstr("the record's ours says the rule appends candidates after "
                                    "OneFlow's list, and the rule marks none")));
  kernels::KernelRegistry no_kernels;
  Pieces bare = pieces;
  bare.kernels = &no_kernels;
  EXPECT_THAT(MissingPieces(*ops::FindOpRecord("relu"), bare),
              ElementsAre(HasSubstr("op relu (ops/records/elementwise.toml): the record says "
                                    "kernels has cpu, and there is no CPU kernel")));
  OpRegistry empty;
  bare.rules = &empty;
  EXPECT_THAT(MissingPieces(*ops::FindOpRecord("relu"), bare),
              ElementsAre(HasSubstr("no rule registered (the family's rules are in "
                                    "ops/elementwise_ops.cc)")));
}

// The record's example in ops/op_record.h.
TEST(OpRecord, TheHeadersExample) {
  const OpRecord* r = ops::FindOpRecord("rms_norm");
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(r->family, "norms");
  EXPECT_EQ(r->origin, ops::OpOrigin::kOneFlow);
  EXPECT_EQ(r->backward, BackwardKind::kRule);
  EXPECT_TRUE(r->cpu_kernel && r->cuda_kernel);
  ASSERT_TRUE(r->recipe.has_value());
  EXPECT_THAT(r->recipe->inputs, ElementsAre("f32[3,5,4]", "f32[4]"));
  ASSERT_EQ(r->aliases.size(), 2u);
  EXPECT_EQ(r->aliases[1].name, "fused_rms_norm");
  EXPECT_TRUE(r->aliases[1].In(ops::Notation::kPaddle));
  EXPECT_FALSE(r->aliases[1].IsRegistryAlias());
  EXPECT_EQ(ops::FindOpRecord("nope"), nullptr);
  EXPECT_EQ(ops::FindOpRecord("mean"), nullptr);  // records are by canonical name
  // einsum has no CUDA kernel yet, and says so.
  EXPECT_FALSE(ops::FindOpRecord("einsum")->cuda_kernel);
  EXPECT_EQ(ops::FindOpRecord("einsum")->origin, ops::OpOrigin::kOurs);
}

}  // namespace
}  // namespace oneflow_sbp
