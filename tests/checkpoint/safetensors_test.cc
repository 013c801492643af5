// safetensors: round trips, ranged reads that read only their bytes, the
// header validation (every rule, with the file, tensor and field named),
// truncation as kDataLoss, and LoadGlobal on real rank threads.
#include "checkpoint/safetensors.h"

#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "eager/eager_context.h"
#include "gtest/gtest.h"
#include "checkpoint/sharded_load.h"
#include "oneflow_sbp/values/tensor_slice_view.h"
#include "comm/inprocess_world.h"
#include "tests/support/status_matchers.h"

using ::oneflow_sbp::matchers::StatusIs;

namespace oneflow_sbp::io {
namespace {

std::string TempPath(const std::string& name) {
  return absl::StrCat(testing::TempDir(), "/", name);
}

LocalTensor Iota(DataType dtype, std::vector<int64_t> dims, double start = 0) {
  LocalTensor t = *LocalTensor::Empty(dtype, dims);
  for (int64_t i = 0; i < t.elem_cnt(); ++i) t.SetDouble(i, dtype == DataType::kBool ? (i % 3 == 0) : start + i);
  return t;
}

// A file with this header and `data_bytes` zero bytes of data.
std::string RawFile(const std::string& name, const std::string& json, int64_t data_bytes,
                    int64_t claimed_len = -1) {
  const std::string path = TempPath(name);
  std::ofstream f(path, std::ios::binary);
  uint64_t n = claimed_len >= 0 ? static_cast<uint64_t>(claimed_len) : json.size();
  for (int i = 0; i < 8; ++i) f.put(static_cast<char>((n >> (8 * i)) & 0xff));
  f << json << std::string(data_bytes, '\0');
  return path;
}

absl::Status OpenStatus(const std::string& path) { return checkpoint::SafetensorsFile::Open(path).status(); }

TEST(SafetensorsTest, RoundTripsEveryDtypeAndMetadata) {
  std::vector<std::pair<std::string, LocalTensor>> ts;
  for (DataType dt : {DataType::kFloat64, DataType::kFloat32, DataType::kFloat16, DataType::kBFloat16,
                      DataType::kInt64, DataType::kInt32, DataType::kInt8, DataType::kUInt8,
                      DataType::kBool}) {
    ts.emplace_back(absl::StrCat("t_", DataTypeName(dt)), Iota(dt, {3, 5}));
  }
  ts.emplace_back("scalar", Iota(DataType::kFloat32, {}, 7));
  ts.emplace_back("empty", Iota(DataType::kFloat32, {0, 4}));
  const std::string path = TempPath("roundtrip.safetensors");
  ASSERT_TRUE(checkpoint::WriteSafetensors(path, ts, {{"format", "pt"}, {"note", "quote \" and \\"}}).ok());
  std::unique_ptr<checkpoint::SafetensorsFile> f = *checkpoint::SafetensorsFile::Open(path);
  EXPECT_EQ(f->metadata().at("note"), "quote \" and \\");
  ASSERT_EQ(f->entries().size(), ts.size());
  for (const auto& [name, t] : ts) {
    absl::StatusOr<LocalTensor> back = f->Read(name);
    ASSERT_TRUE(back.ok()) << back.status();
    EXPECT_TRUE(ExactlyEqual(*back, t)) << name << ": " << DescribeMismatch(*back, t);
  }
  for (const checkpoint::SafetensorsEntry& e : f->entries()) EXPECT_EQ((e.begin - f->header().data_start) % 8, 0);
  EXPECT_THAT(f->Read("nope"), StatusIs(absl::StatusCode::kNotFound));
}

TEST(SafetensorsTest, ARegionReadsOnlyItsBytes) {
  const std::string path = TempPath("region.safetensors");
  const LocalTensor t = Iota(DataType::kFloat32, {6, 4, 5});
  ASSERT_TRUE(checkpoint::WriteSafetensors(path, {{"x", t}}).ok());
  std::unique_ptr<checkpoint::SafetensorsFile> f = *checkpoint::SafetensorsFile::Open(path);
  TensorSlice region(Shape{6, 4, 5});
  region.set_range(0, {2, 5});
  region.set_range(2, {1, 4});
  absl::StatusOr<LocalTensor> r = f->ReadRegion("x", region);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(f->bytes_read(), 3 * 4 * 3 * 4);
  for (int64_t a = 0; a < 3; ++a)
    for (int64_t b = 0; b < 4; ++b)
      for (int64_t c = 0; c < 3; ++c)
        EXPECT_EQ(r->GetDouble((a * 4 + b) * 3 + c), ((a + 2) * 4 + b) * 5 + c + 1);
  region.set_range(0, {5, 7});
  EXPECT_THAT(f->ReadRegion("x", region), StatusIs(absl::StatusCode::kInvalidArgument));
}

TEST(SafetensorsTest, HeaderValidation) {
  struct Case {
    std::string json;
    int64_t data;
    absl::StatusCode code;
    std::string needle;
  };
  const std::vector<Case> cases = {
      {"[1,2]", 0, absl::StatusCode::kInvalidArgument, "not a JSON object"},
      {"{\"a\":{\"dtype\":\"F17\",\"shape\":[1],\"data_offsets\":[0,4]}}", 4,
       absl::StatusCode::kInvalidArgument, "'a': field 'dtype'"},
      {"{\"a\":{\"dtype\":\"F32\",\"shape\":[-1],\"data_offsets\":[0,4]}}", 4,
       absl::StatusCode::kInvalidArgument, "'a': field 'shape'"},
      {"{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,4]}}", 8,
       absl::StatusCode::kInvalidArgument, "shape x itemsize is 8"},
      {"{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[4,0]}}", 8,
       absl::StatusCode::kInvalidArgument, "'a': field 'data_offsets'"},
      {"{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]},"
       "\"b\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[4,8]}}",
       8, absl::StatusCode::kInvalidArgument, "overlaps"},
      {"{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}}", 4,
       absl::StatusCode::kDataLoss, "truncated"},
      {"{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4],\"x\":1}}", 4,
       absl::StatusCode::kInvalidArgument, "unknown field 'x'"},
      {"{\"a\":{\"dtype\":\"F32\",\"shape\":[1.5],\"data_offsets\":[0,4]}}", 4,
       absl::StatusCode::kInvalidArgument, "integer"},
      {"{\"__metadata__\":{\"k\":1}}", 0, absl::StatusCode::kInvalidArgument, "__metadata__"},
      {"{\"a\":{\"dtype\":\"F32\",\"shape\":[1]}}", 4, absl::StatusCode::kInvalidArgument,
       "data_offsets"},
      {"{\"a\":3}", 0, absl::StatusCode::kInvalidArgument, "'a' must be an object"},
  };
  for (size_t i = 0; i < cases.size(); ++i) {
    const std::string path = RawFile(absl::StrCat("bad", i, ".safetensors"), cases[i].json, cases[i].data);
    const absl::Status s = OpenStatus(path);
    EXPECT_EQ(s.code(), cases[i].code) << cases[i].json << " -> " << s;
    EXPECT_NE(s.message().find(cases[i].needle), std::string::npos) << s;
    EXPECT_NE(s.message().find(path), std::string::npos) << s;
  }
  // I16 is a valid entry the engine cannot hold.
  const std::string i16 =
      RawFile("i16.safetensors", "{\"a\":{\"dtype\":\"I16\",\"shape\":[2],\"data_offsets\":[0,4]}}", 4);
  std::unique_ptr<checkpoint::SafetensorsFile> f = *checkpoint::SafetensorsFile::Open(i16);
  EXPECT_THAT(f->Read("a"), StatusIs(absl::StatusCode::kUnimplemented));
}

// A message is safe for a terminal: no raw control byte, and user text
// cut (a 2,000-character name adds at most 64 of its bytes).
void ExpectEscaped(const absl::Status& s, size_t max_size = 600) {
  for (char c : s.message()) {
    EXPECT_FALSE(static_cast<unsigned char>(c) < 0x20 || c == 0x7f)
        << "raw control byte " << static_cast<int>(c) << " in " << absl::CEscape(s.message());
  }
  EXPECT_LE(s.message().size(), max_size) << s.message().size();
}

// A name with a NUL, an ANSI colour escape and 2,011 characters; in the
// header it is written with JSON escapes (\u0000, \u001b).
const std::string kHostileName = std::string("w\0\x1b[31mred", 10) + std::string(2001, 'n');
const char kHostileJson[] = "w\\u0000\\u001b[31mred";

TEST(SafetensorsTest, NamesInMessagesAreEscapedAndCut) {
  const std::string key = absl::StrCat(kHostileJson, std::string(2001, 'n'));
  const std::string path = RawFile(
      "hostile.safetensors",
      absl::StrCat("{\"", key, "\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]},",
                   "\"b\":{\"dtype\":\"\\u001b[2J\",\"shape\":[1],\"data_offsets\":[4,8]}}"),
      8);
  absl::Status s = OpenStatus(path);
  EXPECT_THAT(s, StatusIs(absl::StatusCode::kInvalidArgument)) << s;
  EXPECT_NE(s.message().find("field 'dtype' is '\\x1b[2J'"), std::string::npos) << s;
  ExpectEscaped(s);
  // The same name in a valid file: read (I16 has no engine dtype) and missing.
  const std::string good = RawFile(
      "hostile_ok.safetensors",
      absl::StrCat("{\"", key, "\":{\"dtype\":\"I16\",\"shape\":[2],\"data_offsets\":[0,4]}}"), 4);
  std::unique_ptr<checkpoint::SafetensorsFile> f = *checkpoint::SafetensorsFile::Open(good);
  ASSERT_EQ(f->entries().size(), 1u);
  EXPECT_EQ(f->entries()[0].name, kHostileName);
  s = f->Read(kHostileName).status();
  EXPECT_THAT(s, StatusIs(absl::StatusCode::kUnimplemented)) << s;
  EXPECT_NE(s.message().find("tensor 'w\\x00\\x1b[31mrednnn"), std::string::npos) << s;
  EXPECT_NE(s.message().find("...' (2011 characters)"), std::string::npos) << s;
  ExpectEscaped(s);
  s = f->Read(absl::StrCat(kHostileName, "x")).status();
  EXPECT_THAT(s, StatusIs(absl::StatusCode::kNotFound)) << s;
  EXPECT_NE(s.message().find("(2012 characters)"), std::string::npos) << s;
  ExpectEscaped(s);
  // The writer's refusals name the tensor the same way.
  s = checkpoint::WriteSafetensors(TempPath("w.safetensors"), {{kHostileName, Iota(DataType::kFloat32, {2})},
                                                   {kHostileName, Iota(DataType::kFloat32, {2})}});
  EXPECT_NE(s.message().find("given twice"), std::string::npos) << s;
  ExpectEscaped(s);
  // A path with control characters is escaped too.
  s = OpenStatus(TempPath("no\x1b[31mfile\n.safetensors"));
  EXPECT_THAT(s, StatusIs(absl::StatusCode::kNotFound)) << s;
  EXPECT_NE(s.message().find("no\\x1b[31mfile\\n.safetensors"), std::string::npos) << s;
  ExpectEscaped(s);
}

// The header is read as strict JSON: what protobuf's reader let through
// (single quotes, trailing commas, two entries for one name, of which it
// kept the last) is refused, naming the file and the byte.
TEST(SafetensorsTest, HeaderIsStrictJson) {
  const std::string entry = "{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}";
  struct Case {
    std::string json;
    std::string needle;
  };
  const std::vector<Case> cases = {
      {absl::StrCat("{'a':", entry, "}"), "expected a double-quoted key, got '''"},
      {absl::StrCat("{\"a\":", entry, ",}"), "expected a double-quoted key, got '}'"},
      {"{\"a\":{\"dtype\":\"F32\",\"shape\":[1,],\"data_offsets\":[0,4]}}", "got ']'"},
      {absl::StrCat("{a:", entry, "}"), "expected a double-quoted key"},
      {absl::StrCat("{\"a\":", entry, ",\"a\":", entry, "}"), "duplicate key 'a'"},
      {"{\"a\":{\"dtype\":\"F32\",\"dtype\":\"F16\",\"shape\":[1],\"data_offsets\":[0,4]}}",
       "duplicate key 'dtype'"},
      {"{\"__metadata__\":{\"k\":\"1\",\"k\":\"2\"}}", "duplicate key 'k'"},
      {absl::StrCat("{\"a\":", entry, "} x"), "expected the end of input"},
      {absl::StrCat("{\"a\":", entry, "/* c */}"), "got '/'"},
      {"{\"a\":{\"dtype\":\"F32\",\"shape\":[01],\"data_offsets\":[0,4]}}", "got '1'"},
      {"{\"x\\q\":1}", "an escape"},
      {"{\"\xff\":1}", "valid UTF-8"},
      {"{\"\\ud800\":1}", "low surrogate"},
      {absl::StrCat(std::string(40, '['), std::string(40, ']')), "at most 32 levels"},
  };
  for (size_t i = 0; i < cases.size(); ++i) {
    const std::string path = RawFile(absl::StrCat("strict", i, ".safetensors"), cases[i].json, 4);
    const absl::Status s = OpenStatus(path);
    EXPECT_THAT(s, StatusIs(absl::StatusCode::kInvalidArgument)) << cases[i].json << " -> " << s;
    EXPECT_NE(s.message().find("the header is not valid JSON: byte "), std::string::npos) << s;
    EXPECT_NE(s.message().find(cases[i].needle), std::string::npos) << cases[i].json << " -> " << s;
    EXPECT_NE(s.message().find(path), std::string::npos) << s;
    ExpectEscaped(s);
  }
  // Escapes decode: a name spelled with \u escapes is the same name.
  const std::string path = RawFile(
      "escaped.safetensors",
      absl::StrCat("{\"\\u0061\\ud83d\\ude00\\n\":", entry, ",\"__metadata__\":{\"k\":\"\\\"\"}}"), 4);
  absl::StatusOr<std::unique_ptr<checkpoint::SafetensorsFile>> f = checkpoint::SafetensorsFile::Open(path);
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_EQ((*f)->entries()[0].name, "a\xF0\x9F\x98\x80\n");
  EXPECT_EQ((*f)->metadata().at("k"), "\"");
}

TEST(SafetensorsTest, LengthsAndTruncation) {
  EXPECT_THAT(OpenStatus(TempPath("missing.safetensors")), StatusIs(absl::StatusCode::kNotFound));
  const std::string tiny = TempPath("tiny.safetensors");
  std::ofstream(tiny) << "abc";
  EXPECT_THAT(OpenStatus(tiny), StatusIs(absl::StatusCode::kDataLoss));
  EXPECT_THAT(OpenStatus(RawFile("huge.safetensors", "{}", 0, int64_t{200} << 20)),
            StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(OpenStatus(RawFile("short.safetensors", "{}", 0, 100)), StatusIs(absl::StatusCode::kDataLoss));
  // Cut a real file in the middle of its data.
  const std::string path = TempPath("cut.safetensors");
  ASSERT_TRUE(checkpoint::WriteSafetensors(path, {{"x", Iota(DataType::kFloat32, {100})}}).ok());
  ASSERT_EQ(::truncate(path.c_str(), 200), 0);
  const absl::Status s = OpenStatus(path);
  EXPECT_THAT(s, StatusIs(absl::StatusCode::kDataLoss)) << s;
  EXPECT_NE(s.message().find("'x'"), std::string::npos) << s;
}

TEST(SafetensorsTest, WriterRefusesBadInputAndLeavesTheOldFile) {
  const std::string path = TempPath("keep.safetensors");
  ASSERT_TRUE(checkpoint::WriteSafetensors(path, {{"a", Iota(DataType::kFloat32, {2})}}).ok());
  EXPECT_THAT(checkpoint::WriteSafetensors(path, {{"a", Iota(DataType::kFloat32, {2})}, {"a", Iota(DataType::kFloat32, {2})}})
                ,
            StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(checkpoint::WriteSafetensors(path, {{"__metadata__", Iota(DataType::kFloat32, {2})}}),
            StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_TRUE(checkpoint::SafetensorsFile::Open(path).ok());
  EXPECT_THAT(checkpoint::WriteSafetensors("/nonexistent-dir/x.safetensors", {}), StatusIs(absl::StatusCode::kNotFound));
}

TEST(SafetensorsTest, LoadGlobalReadsEachRanksSliceOnly) {
  const std::string path = TempPath("global.safetensors");
  const LocalTensor w = Iota(DataType::kFloat32, {10, 6});
  ASSERT_TRUE(checkpoint::WriteSafetensors(path, {{"w", w}}).ok());
  const Placement p = *Placement::Parse("cpu:0-3 [2,2]");
  std::unique_ptr<engine::Engine> engine = *engine::Engine::Create();
  for (const char* layout : {"(S(0), S(1))", "(B, S(0))", "(P, S(1))", "(B, B)"}) {
    const NdSbp nd = *NdSbp::Parse(layout);
    std::vector<std::unique_ptr<checkpoint::SafetensorsFile>> files(4);
    for (auto& f : files) f = *checkpoint::SafetensorsFile::Open(path);
    std::vector<eager::GlobalTensor> got(4);
    absl::StatusOr<std::vector<absl::Status>> st = comm::RunRanks(4, [&](comm::Communicator& world) {
      eager::EagerContext ctx(*engine, world);
      absl::StatusOr<eager::GlobalTensor> t = checkpoint::LoadGlobal(ctx, *files[world.rank()], "w", p, nd);
      if (!t.ok()) return t.status();
      got[world.rank()] = *t;
      return absl::OkStatus();
    });
    ASSERT_TRUE(st.ok());
    for (int r = 0; r < 4; ++r) {
      ASSERT_TRUE((*st)[r].ok()) << (*st)[r];
      const TensorSlice slice = *RankSlice(Shape{10, 6}, nd, p, r);
      const bool p_zero = nd[0].is_partial_sum() && p.CoordinateOf(r)[0] != 0;
      EXPECT_EQ(files[r]->bytes_read(), p_zero ? 0 : slice.elem_cnt() * 4) << layout << " rank " << r;
      const LocalTensor& local = got[r].local();
      for (int64_t i = 0; i < slice.range(0).size(); ++i)
        for (int64_t j = 0; j < slice.range(1).size(); ++j)
          EXPECT_EQ(local.GetDouble(i * slice.range(1).size() + j),
                    p_zero ? 0 : (slice.range(0).begin + i) * 6 + slice.range(1).begin + j);
    }
  }
  // Errors: a missing tensor, a layout that does not fit.
  absl::StatusOr<std::vector<absl::Status>> st = comm::RunRanks(1, [&](comm::Communicator& world) {
    eager::EagerContext ctx(*engine, world);
    std::unique_ptr<checkpoint::SafetensorsFile> f = *checkpoint::SafetensorsFile::Open(path);
    EXPECT_THAT(checkpoint::LoadGlobal(ctx, *f, "nope", *Placement::Parse("cpu:0"), *NdSbp::Parse("B")),
              StatusIs(absl::StatusCode::kNotFound));
    EXPECT_THAT(checkpoint::LoadGlobal(ctx, *f, "w", *Placement::Parse("cpu:0"), *NdSbp::Parse("S(2)")),
              StatusIs(absl::StatusCode::kInvalidArgument));
    return absl::OkStatus();
  });
  ASSERT_TRUE(st.ok());
}

}  // namespace
}  // namespace oneflow_sbp::io
