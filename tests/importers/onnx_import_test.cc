// The ONNX importer on the fixtures of tools/reference/make_onnx_fixtures.py
// (tests/testdata/onnx/): what each model becomes, its weights, and each
// way a file can be wrong.
#include "importers/onnx_import.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "io/program_proto.h"
#include "oneflow_sbp/rule_api/op_registry.h"
#include "ops/builtin_ops.h"

namespace oneflow_sbp::importers {
namespace {

using ::testing::HasSubstr;

const char kDir[] = "tests/testdata/onnx/";

// Every import in these tests maps onto the built-in catalog.
absl::StatusOr<ImportedModel> Import(const std::string& file, ImportOptions o = {}) {
  o.registry = &ops::BuiltinOpRegistry();
  return ImportOnnx(absl::StrCat(kDir, file), o);
}

// "op(inputs)->output" per op, one line.
std::string OpsLine(const oneflow::ProgramProto& p) {
  std::vector<std::string> ops;
  for (const oneflow::ProgramOpProto& op : p.ops()) {
    ops.push_back(absl::StrCat(op.op(), "(", absl::StrJoin(op.inputs(), ","), ")->",
                               absl::StrJoin(op.outputs(), ",")));
  }
  return absl::StrJoin(ops, " ");
}

std::string TensorsLine(const oneflow::ProgramProto& p) {
  std::vector<std::string> ts;
  for (const oneflow::ProgramTensorProto& t : p.tensors()) {
    ts.push_back(absl::StrCat(t.name(), ":", t.dtype(), "[", absl::StrJoin(t.shape(), ","), "]",
                              t.has_nd_sbp() ? t.nd_sbp() : ""));
  }
  return absl::StrJoin(ts, " ");
}

TEST(OnnxImport, MlpBecomesAProgramWithItsWeights) {
  ImportOptions o;
  o.dims["batch"] = 8;
  o.placement = "cpu:0-3 [2,2]";
  absl::StatusOr<ImportedModel> m = Import("mlp.onnx", o);
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ(m->opset, 17);
  // The input first; initializers as ops first read them.
  EXPECT_EQ(TensorsLine(m->program),
            "x:f32[8,8](B, B) W1:f32[16,8] b1:f32[16] W2:f32[16,4] b2:f32[4]");
  // Gemm(transB) is matmul then broadcast_add of its bias.
  EXPECT_EQ(OpsLine(m->program),
            "matmul(x,W1)->h/matmul broadcast_add(h/matmul,b1)->h relu(h)->a matmul(a,W2)->z "
            "broadcast_add(z,b2)->logits softmax(logits)->probs");
  EXPECT_TRUE(m->program.ops(0).attrs().at("transpose_b").bool_value());
  ASSERT_EQ(m->program.outputs_size(), 1);
  EXPECT_EQ(m->program.outputs(0).name(), "probs");
  ASSERT_EQ(m->weights.size(), 4u);
  EXPECT_EQ(m->weights[0].first, "W1");
  EXPECT_EQ(m->weights[0].second.byte_size(), 16 * 8 * 4);
  EXPECT_EQ(m->mapped.at("Gemm"), 1);
  EXPECT_TRUE(m->weightless.empty());
  // `sbp plan` builds it.
  EXPECT_TRUE(io::ProgramFromProto(m->program, ops::BuiltinOpRegistry()).ok());
}

TEST(OnnxImport, ReshapeTransposeAndPointwiseOps) {
  absl::StatusOr<ImportedModel> m = Import("mlp_reshape.onnx");
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ(m->opset, 20);
  // Reshape's [0,0,3,4] keeps dims 0 and 1: [2,6,3,4]; Gelu(tanh) is
  // fast_gelu; Dropout and Identity are the identity.
  EXPECT_EQ(OpsLine(m->program),
            "broadcast_matmul(x,Wq)->q reshape(q)->q4 transpose(q4)->qt fast_gelu(qt)->g "
            "tanh(g)->t broadcast_div(t,two)->d broadcast_sub(d,g)->s negative(s)->n "
            "identity(n)->i identity(i)->y");
  const google::protobuf::ListValue& shape = m->program.ops(1).attrs().at("shape").list_value();
  ASSERT_EQ(shape.values_size(), 4);
  EXPECT_EQ(shape.values(0).number_value(), 2);
  EXPECT_EQ(shape.values(1).number_value(), 6);
  EXPECT_TRUE(io::ProgramFromProto(m->program, ops::BuiltinOpRegistry()).ok());
}

TEST(OnnxImport, ShapeSubgraphsFoldAndStructureOpsMap) {
  absl::StatusOr<ImportedModel> m = Import("encoder_block.onnx");
  ASSERT_TRUE(m.ok()) << m.status();
  // Shape -> Gather -> Unsqueeze -> Concat made the Reshape's target at
  // import ([4,6,2,4]); Constant nodes and ConstantOfShape folded too.
  EXPECT_EQ(OpsLine(m->program),
            "gather(E,ids)->h layer_norm(h,beta,gamma)->n reshape(n)->heads "
            "reduce_mean(heads)->m squeeze(m)->m3 slice(m3)->m2 cat(m2,m2)->mm "
            "cast(ones)->mask where(mask,mm,neg)->masked reshape(masked)->flat "
            "expand_dims(flat)->flat3 expand(flat3)->y");
  EXPECT_EQ(m->folded.at("Shape"), 1);
  EXPECT_EQ(m->folded.at("Constant"), 3);
  EXPECT_EQ(m->folded.at("Concat"), 1);
  // Folded shape values read by no op leave no tensor; the mask an op
  // reads is a fixed, replicated tensor, the initializers free ones.
  EXPECT_EQ(TensorsLine(m->program),
            "ids:i64[4,6](B) E:f32[32,8] beta:f32[8] gamma:f32[8] ones:i64[4,6,2](B) neg:f32[]");
  const google::protobuf::ListValue& shape = m->program.ops(2).attrs().at("shape").list_value();
  ASSERT_EQ(shape.values_size(), 4);
  EXPECT_EQ(shape.values(3).number_value(), 4);
  EXPECT_TRUE(io::ProgramFromProto(m->program, ops::BuiltinOpRegistry()).ok());
}

TEST(OnnxImport, ExternalDataIsReadBesideTheModel) {
  ImportOptions o;
  o.dims["batch"] = 4;
  absl::StatusOr<ImportedModel> inline_ = Import("mlp.onnx", o);
  absl::StatusOr<ImportedModel> external = Import("mlp_external.onnx", o);
  ASSERT_TRUE(inline_.ok()) << inline_.status();
  ASSERT_TRUE(external.ok()) << external.status();
  ASSERT_EQ(external->weights.size(), inline_->weights.size());
  for (size_t i = 0; i < external->weights.size(); ++i) {
    const LocalTensor& a = inline_->weights[i].second;
    const LocalTensor& b = external->weights[i].second;
    ASSERT_EQ(a.byte_size(), b.byte_size());
    for (int64_t k = 0; k < a.elem_cnt(); ++k) ASSERT_EQ(a.GetDouble(k), b.GetDouble(k));
  }
}

TEST(OnnxImport, EachWrongFileIsNamed) {
  ImportOptions o;
  o.dims["batch"] = 4;
  auto error = [&](const std::string& file) {
    absl::StatusOr<ImportedModel> m = Import(file, o);
    return m.ok() ? std::string("ok") : std::string(m.status().message());
  };
  EXPECT_THAT(error("bad_opset.onnx"), HasSubstr("ONNX opset 11 is not supported (opsets 13 to 21"));
  EXPECT_THAT(error("unmapped.onnx"),
              HasSubstr("unmapped.onnx: node hard (Hardmax): ONNX op Hardmax has no mapping"));
  EXPECT_THAT(error("truncated.onnx"), HasSubstr("truncated.onnx: not an ONNX model"));
  EXPECT_THAT(error("missing_weight.onnx"),
              HasSubstr("initializer W1: missing weight file tests/testdata/onnx/missing_weight.weights"));
  EXPECT_THAT(error("no_such.onnx"), HasSubstr("no_such.onnx: cannot open"));
  // A symbolic dimension needs a value.
  absl::StatusOr<ImportedModel> m = Import("mlp.onnx");
  ASSERT_FALSE(m.ok());
  EXPECT_THAT(m.status().message(), HasSubstr("graph input x: dimension 'batch' has no value"));
}

TEST(OnnxImport, BytesThatAreNotAModelNeverAbort) {
  for (const std::string& bytes : {std::string(""), std::string("\x08\x07", 2),
                                   std::string(64, '\xff'), std::string("garbage")}) {
    absl::StatusOr<ImportedModel> m = ImportOnnxBytes(bytes, "x.onnx", {});
    EXPECT_FALSE(m.ok());
  }
}

}  // namespace
}  // namespace oneflow_sbp::importers
