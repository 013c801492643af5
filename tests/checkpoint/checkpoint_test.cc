// Distributed checkpoints on real rank threads: save from one mesh and
// layout, load into others; pieces written once; each rank reads only the
// pieces it needs; every failure clear, agreed by all ranks, nothing half
// loaded; export and inspect.
#include "checkpoint/checkpoint.h"

#include <dirent.h>
#include <unistd.h>

#include <fstream>
#include <functional>
#include <iterator>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "eager/tensor_layout.h"
#include "gtest/gtest.h"
#include "checkpoint/safetensors.h"
#include "comm/inprocess_world.h"
#include "tests/support/status_matchers.h"

using ::oneflow_sbp::matchers::StatusIs;

namespace oneflow_sbp::io {
namespace {

using eager::EagerContext;
using eager::GlobalTensor;

LocalTensor Values(std::vector<int64_t> dims, double scale) {
  LocalTensor t = *LocalTensor::Empty(DataType::kFloat32, dims);
  for (int64_t i = 0; i < t.elem_cnt(); ++i) t.SetDouble(i, scale * (i + 1));
  return t;
}

std::string FreshDir(const std::string& name) {
  return absl::StrCat(testing::TempDir(), "/", name, "-", ::getpid());
}

// Runs fn on `n` rank threads; returns each rank's status.
std::vector<absl::Status> OnRanks(engine::Engine& engine, int n,
                                  const std::function<absl::Status(EagerContext&)>& fn) {
  absl::StatusOr<std::vector<absl::Status>> st = comm::RunRanks(n, [&](comm::Communicator& w) {
    EagerContext ctx(engine, w);
    return fn(ctx);
  });
  EXPECT_TRUE(st.ok());
  return *st;
}

const LocalTensor kW = Values({6, 4}, 1);
const LocalTensor kB = Values({4}, 0.5);

// Saves w as `w_layout` and b as `b_layout` from cpu:0-3 [2,2].
void SaveFrom22(engine::Engine& engine, const std::string& dir, const char* w_layout, const char* b_layout,
                double scale = 1) {
  const Placement p = *Placement::Parse("cpu:0-3 [2,2]");
  std::vector<absl::Status> st = OnRanks(engine, 4, [&](EagerContext& ctx) -> absl::Status {
    absl::StatusOr<GlobalTensor> w = eager::FromFull(ctx, Values({6, 4}, scale), p, *NdSbp::Parse(w_layout));
    absl::StatusOr<GlobalTensor> b = eager::FromFull(ctx, kB, p, *NdSbp::Parse(b_layout));
    if (!w.ok() || !b.ok()) return absl::InternalError("FromFull");
    return checkpoint::SaveCheckpoint(ctx, dir, {{"w", *w}, {"b", *b}}, {{"step", "3"}});
  });
  for (const absl::Status& s : st) ASSERT_TRUE(s.ok()) << s;
}

TEST(CheckpointTest, SavesEachRegionOnceAndReshardsOnLoad) {
  std::unique_ptr<engine::Engine> engine = *engine::Engine::Create();
  const std::string dir = FreshDir("reshard");
  SaveFrom22(*engine, dir, "(S(0), B)", "(P, B)");
  checkpoint::CheckpointIndex index = *checkpoint::ReadCheckpointIndex(dir);
  EXPECT_EQ(index.version, 1);
  EXPECT_EQ(index.metadata.at("step"), "3");
  ASSERT_EQ(index.tensors.size(), 2u);
  // w: two row halves, each written once although two ranks hold it.
  EXPECT_EQ(index.Find("w")->pieces.size(), 2u);
  EXPECT_EQ(index.Find("w")->pieces[0].file, "v1-rank0.safetensors");
  EXPECT_EQ(index.Find("w")->pieces[1].file, "v1-rank2.safetensors");
  // b: partial sums reduced, then one broadcast piece.
  EXPECT_EQ(index.Find("b")->nd_sbp, "(B, B)");
  EXPECT_EQ(index.Find("b")->pieces.size(), 1u);

  struct Target {
    const char* placement;
    const char* w_layout;
    int ranks;
  };
  for (const Target& target : {Target{"cpu:0-3", "S(1)", 4}, Target{"cpu:0-2", "S(0)", 3},
                               Target{"cpu:0", "B", 1}, Target{"cpu:0-3 [2,2]", "(S(1), S(0))", 4},
                               Target{"cpu:0-1", "P", 2}}) {
    const Placement p = *Placement::Parse(target.placement);
    std::vector<LocalTensor> w_full(target.ranks), b_full(target.ranks);
    std::vector<absl::Status> st = OnRanks(*engine, target.ranks, [&](EagerContext& ctx) -> absl::Status {
      absl::StatusOr<std::vector<GlobalTensor>> t = checkpoint::LoadCheckpoint(
          ctx, dir,
          {{"w", p, *NdSbp::Parse(target.w_layout), TensorDesc{Shape{6, 4}, DataType::kFloat32}},
           {"b", p, *NdSbp::Parse(p.num_axes() == 2 ? "(B, B)" : "B"), std::nullopt}});
      if (!t.ok()) return t.status();
      absl::StatusOr<LocalTensor> w = eager::ToFull(ctx, (*t)[0]);
      absl::StatusOr<LocalTensor> b = eager::ToFull(ctx, (*t)[1]);
      if (!w.ok() || !b.ok()) return absl::InternalError("ToFull");
      w_full[ctx.rank()] = *w;
      b_full[ctx.rank()] = *b;
      return absl::OkStatus();
    });
    for (int r = 0; r < target.ranks; ++r) {
      ASSERT_TRUE(st[r].ok()) << target.placement << " " << st[r];
      EXPECT_TRUE(ExactlyEqual(w_full[r], kW)) << target.placement << ": " << DescribeMismatch(w_full[r], kW);
      EXPECT_TRUE(ExactlyEqual(b_full[r], kB)) << DescribeMismatch(b_full[r], kB);
    }
  }
}

// docs/CHECKPOINTS.md's example, exactly: w f32[6,4] saved as (S(0), B)
// from cpu:0-3 [2,2] is two 48-byte pieces (rows [0,3) by rank 0, rows
// [3,6) by rank 2). Loaded as S(0) on cpu:0-1 each rank reads one piece,
// 48 bytes; as S(1) on cpu:0-3 every rank's columns cross both pieces, so
// each reads both whole, 96 bytes. Nothing of b.
TEST(CheckpointTest, EachRankReadsOnlyThePiecesItNeeds) {
  std::unique_ptr<engine::Engine> engine = *engine::Engine::Create();
  const std::string dir = FreshDir("bytes");
  SaveFrom22(*engine, dir, "(S(0), B)", "(B, B)");
  const checkpoint::CheckpointIndex index = *checkpoint::ReadCheckpointIndex(dir);
  const checkpoint::CheckpointTensor* w = index.Find("w");
  ASSERT_EQ(w->pieces.size(), 2u);
  EXPECT_EQ(w->pieces[0].file, "v1-rank0.safetensors");
  EXPECT_EQ(w->pieces[0].region.ToString(), "[0,3)x[0,4)");
  EXPECT_EQ(w->pieces[1].file, "v1-rank2.safetensors");
  EXPECT_EQ(w->pieces[1].region.ToString(), "[3,6)x[0,4)");
  for (const checkpoint::CheckpointPiece& piece : w->pieces) EXPECT_EQ(piece.bytes, 48);
  struct Case {
    const char* placement;
    const char* layout;
    int ranks;
    int64_t pieces;
    int64_t bytes;
  };
  for (const Case& c : {Case{"cpu:0-1", "S(0)", 2, 1, 48}, Case{"cpu:0-3", "S(1)", 4, 2, 96}}) {
    const Placement p = *Placement::Parse(c.placement);
    std::vector<checkpoint::LoadStats> stats(c.ranks);
    std::vector<absl::Status> st = OnRanks(*engine, c.ranks, [&](EagerContext& ctx) -> absl::Status {
      return checkpoint::LoadCheckpoint(ctx, dir, {{"w", p, *NdSbp::Parse(c.layout), std::nullopt}},
                            &stats[ctx.rank()])
          .status();
    });
    for (int r = 0; r < c.ranks; ++r) {
      ASSERT_TRUE(st[r].ok()) << c.layout << " " << st[r];
      EXPECT_EQ(stats[r].pieces_read, c.pieces) << c.layout << " rank " << r;
      EXPECT_EQ(stats[r].bytes_read, c.bytes) << c.layout << " rank " << r;
    }
  }
}

TEST(CheckpointTest, APlainSafetensorsFileIsASourceReadBySlice) {
  std::unique_ptr<engine::Engine> engine = *engine::Engine::Create();
  const std::string file = FreshDir("plain") + ".safetensors";
  ASSERT_TRUE(checkpoint::WriteSafetensors(file, {{"w", kW}, {"b", kB}}).ok());
  const Placement p = *Placement::Parse("cpu:0-1");
  std::vector<checkpoint::LoadStats> stats(2);
  std::vector<LocalTensor> full(2);
  std::vector<absl::Status> st = OnRanks(*engine, 2, [&](EagerContext& ctx) -> absl::Status {
    absl::StatusOr<std::vector<GlobalTensor>> t =
        checkpoint::LoadCheckpoint(ctx, file, {{"w", p, *NdSbp::Parse("S(1)"), std::nullopt}}, &stats[ctx.rank()]);
    if (!t.ok()) return t.status();
    absl::StatusOr<LocalTensor> f = eager::ToFull(ctx, (*t)[0]);
    if (f.ok()) full[ctx.rank()] = *f;
    return f.status();
  });
  for (int r = 0; r < 2; ++r) {
    ASSERT_TRUE(st[r].ok()) << st[r];
    EXPECT_EQ(stats[r].bytes_read, 6 * 2 * 4);
    EXPECT_TRUE(ExactlyEqual(full[r], kW));
  }
}

std::vector<absl::Status> LoadW(engine::Engine& engine, const std::string& dir, int ranks = 2,
                                std::optional<TensorDesc> expect = std::nullopt,
                                const std::string& name = "w") {
  const Placement p = *Placement::Parse(ranks == 2 ? "cpu:0-1" : "cpu:0");
  return OnRanks(engine, ranks, [&](EagerContext& ctx) {
    return checkpoint::LoadCheckpoint(ctx, dir, {{name, p, *NdSbp::Parse("S(0)"), expect}}).status();
  });
}

// The names in a directory but hidden ones (., ..).
std::set<std::string> FilesIn(const std::string& dir) {
  std::set<std::string> files;
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) return files;
  while (dirent* e = ::readdir(d)) {
    if (e->d_name[0] != '.') files.insert(e->d_name);
  }
  ::closedir(d);
  return files;
}

std::string ReadText(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

void FlipByte(const std::string& path, int64_t offset_from_end) {
  std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
  f.seekg(-offset_from_end, std::ios::end);
  char c = 0;
  f.read(&c, 1);
  f.seekp(-offset_from_end, std::ios::end);
  c ^= 0x5a;
  f.write(&c, 1);
}

bool Mentions(const absl::Status& s, const std::string& needle) {
  return s.message().find(needle) != std::string::npos;
}

// w saved as (S(0), B) from [2,2], its second piece (rows [3,6), in
// v1-rank2.safetensors) damaged. Loading w as S(0) on cpu:0-1 (only rank 1
// needs that piece) and exporting fail with `code`, and the message names
// the file, the tensor and the piece, then the reader's words (`what`);
// rank 0 hears another rank failed. Returns the ranks' LoadStats.
std::vector<checkpoint::LoadStats> ExpectTheSecondPieceFails(engine::Engine& engine, const std::string& dir,
                                                 absl::StatusCode code, const std::string& what) {
  const std::string named = absl::StrCat(dir, "/v1-rank2.safetensors': tensor 'w': piece 'w@1': ", what);
  const Placement p = *Placement::Parse("cpu:0-1");
  std::vector<checkpoint::LoadStats> stats(2);
  std::vector<absl::Status> st = OnRanks(engine, 2, [&](EagerContext& ctx) -> absl::Status {
    return checkpoint::LoadCheckpoint(ctx, dir, {{"w", p, *NdSbp::Parse("S(0)"), std::nullopt}},
                          &stats[ctx.rank()])
        .status();
  });
  EXPECT_THAT(st[0], StatusIs(absl::StatusCode::kAborted)) << st[0];
  EXPECT_TRUE(Mentions(st[0], "another rank failed")) << st[0];
  EXPECT_EQ(st[1].code(), code) << st[1];
  EXPECT_TRUE(Mentions(st[1], named)) << st[1];
  const absl::Status exported = checkpoint::ExportCheckpoint(dir, dir + ".out.safetensors");
  EXPECT_EQ(exported.code(), code) << exported;
  EXPECT_TRUE(Mentions(exported, named)) << exported;
  return stats;
}

TEST(CheckpointTest, FailuresAreClearAndAgreedByEveryRank) {
  std::unique_ptr<engine::Engine> engine = *engine::Engine::Create();
  const std::string missing = FreshDir("none");
  for (const absl::Status& s : LoadW(*engine, missing)) EXPECT_THAT(s, StatusIs(absl::StatusCode::kNotFound)) << s;

  const std::string dir = FreshDir("fail");
  SaveFrom22(*engine, dir, "(S(0), B)", "(B, B)");
  std::vector<absl::Status> st = LoadW(*engine, dir, 2, std::nullopt, "v");
  EXPECT_THAT(st[0], StatusIs(absl::StatusCode::kNotFound));
  EXPECT_TRUE(Mentions(st[0], "no tensor 'v'")) << st[0];
  // The caller expects another shape, or another dtype.
  st = LoadW(*engine, dir, 2, TensorDesc{Shape{4, 6}, DataType::kFloat32});
  for (const absl::Status& s : st) {
    EXPECT_THAT(s, StatusIs(absl::StatusCode::kInvalidArgument)) << s;
    EXPECT_TRUE(Mentions(s, "tensor 'w' is f32[6,4]; expected f32[4,6]")) << s;
  }
  st = LoadW(*engine, dir, 2, TensorDesc{Shape{6, 4}, DataType::kFloat64});
  for (const absl::Status& s : st) {
    EXPECT_THAT(s, StatusIs(absl::StatusCode::kInvalidArgument)) << s;
    EXPECT_TRUE(Mentions(s, "tensor 'w' is f32[6,4]; expected f64[6,4]")) << s;
  }

  // Alter one byte of w's second piece: only rank 1 reads it.
  FlipByte(dir + "/v1-rank2.safetensors", 3);
  st = LoadW(*engine, dir);
  EXPECT_TRUE(st[0].code() == absl::StatusCode::kAborted) << st[0];
  EXPECT_THAT(st[1], StatusIs(absl::StatusCode::kDataLoss)) << st[1];
  EXPECT_TRUE(Mentions(st[1], "v1-rank2.safetensors")) << st[1];
  EXPECT_TRUE(Mentions(st[1], "'w'")) << st[1];
  EXPECT_TRUE(Mentions(st[1], "checksum")) << st[1];
  // Truncated piece file, cut inside its header.
  ASSERT_EQ(::truncate((dir + "/v1-rank2.safetensors").c_str(), 40), 0);
  ExpectTheSecondPieceFails(*engine, dir, absl::StatusCode::kDataLoss, "header length");
}

// A shard file deleted from under its index. With LoadStats asked for,
// too: the failed open used to leave a null file behind that the byte
// count then read.
TEST(CheckpointTest, ADeletedShardFileIsNamedWithItsTensor) {
  std::unique_ptr<engine::Engine> engine = *engine::Engine::Create();
  const std::string dir = FreshDir("deleted");
  SaveFrom22(*engine, dir, "(S(0), B)", "(B, B)");
  ASSERT_EQ(::unlink((dir + "/v1-rank2.safetensors").c_str()), 0);
  const std::vector<checkpoint::LoadStats> stats =
      ExpectTheSecondPieceFails(*engine, dir, absl::StatusCode::kNotFound, "open");
  EXPECT_EQ(stats[0].bytes_read, 48);  // its own piece, read before the agreement
  EXPECT_EQ(stats[1].bytes_read, 0);
}

// An index whose dtype disagrees with the shard files (w's pieces are F32,
// the index says i32): loading and exporting are kDataLoss naming the
// file, the tensor and both dtypes, never the bytes read as the wrong type.
TEST(CheckpointTest, APieceOfAnotherDtypeThanItsIndexIsDataLoss) {
  std::unique_ptr<engine::Engine> engine = *engine::Engine::Create();
  const std::string dir = FreshDir("dtype");
  SaveFrom22(*engine, dir, "(S(0), B)", "(B, B)");
  const std::string path = dir + "/index.json";
  const std::string json = ReadText(path);
  const std::string f32_w = "\"w\": {\"dtype\": \"f32\"";
  ASSERT_NE(json.find(f32_w), std::string::npos) << json;
  std::ofstream(path, std::ios::trunc)
      << absl::StrReplaceAll(json, {{f32_w, "\"w\": {\"dtype\": \"i32\""}});
  std::vector<absl::Status> st = LoadW(*engine, dir);
  for (int r = 0; r < 2; ++r) {
    EXPECT_THAT(st[r], StatusIs(absl::StatusCode::kDataLoss)) << st[r];
    EXPECT_TRUE(Mentions(st[r], absl::StrCat("v1-rank", 2 * r, ".safetensors': tensor 'w': piece 'w@",
                                             r, "' is f32, the index says i32")))
        << st[r];
  }
  const absl::Status exported = checkpoint::ExportCheckpoint(dir, dir + ".out.safetensors");
  EXPECT_THAT(exported, StatusIs(absl::StatusCode::kDataLoss)) << exported;
  EXPECT_TRUE(Mentions(exported, "v1-rank0.safetensors': tensor 'w': piece 'w@0' is f32, the index says i32"))
      << exported;
}

// One rank fails alone while saving (here: its copy of the arguments gives
// w a layout that does not fit w; the SPMD contract is broken on that rank
// only, as a device copy or an allocation could fail on one rank). Every
// rank's function returns normally, so the world is not aborted for them:
// only the save's own agreements can tell the others. Every rank returns
// an error (the others: "another rank failed", not a timeout), and the
// previous checkpoint stays intact, with no file of the failed version
// left behind.
TEST(CheckpointTest, ARankFailingAloneDuringSaveFailsEveryRankAndKeepsThePrevious) {
  std::unique_ptr<engine::Engine> engine = *engine::Engine::Create();
  const std::string dir = FreshDir("save-fails");
  SaveFrom22(*engine, dir, "(S(0), B)", "(B, B)", 1);
  const Placement p = *Placement::Parse("cpu:0-3 [2,2]");
  std::vector<absl::Status> saved(4);
  eager::EagerOptions options;
  options.timeout = absl::Seconds(20);  // a lost agreement fails, never hangs the test
  absl::StatusOr<std::vector<absl::Status>> ran = comm::RunRanks(4, [&](comm::Communicator& world) {
    EagerContext ctx(*engine, world, options);
    absl::StatusOr<GlobalTensor> w = eager::FromFull(ctx, Values({6, 4}, 2), p, *NdSbp::Parse("(S(0), B)"));
    absl::StatusOr<GlobalTensor> b = eager::FromFull(ctx, kB, p, *NdSbp::Parse("(P, B)"));
    if (!w.ok() || !b.ok()) return absl::InternalError("FromFull");
    GlobalTensor mine = *w;
    if (ctx.rank() == 2) mine = GlobalTensor(w->desc(), p, *NdSbp::Parse("(S(0), S(5))"), w->local());
    saved[ctx.rank()] = checkpoint::SaveCheckpoint(ctx, dir, {{"w", mine}, {"b", *b}}, {{"step", "4"}});
    return absl::OkStatus();
  });
  ASSERT_TRUE(ran.ok()) << ran.status();
  for (int r = 0; r < 4; ++r) {
    if (r == 2) {
      EXPECT_THAT(saved[r], StatusIs(absl::StatusCode::kInvalidArgument)) << saved[r];
      EXPECT_TRUE(Mentions(saved[r], "tensor 'w'")) << saved[r];
    } else {
      EXPECT_THAT(saved[r], StatusIs(absl::StatusCode::kAborted)) << r << ": " << saved[r];
      EXPECT_TRUE(Mentions(saved[r], "another rank failed")) << r << ": " << saved[r];
    }
  }
  const checkpoint::CheckpointIndex index = *checkpoint::ReadCheckpointIndex(dir);
  EXPECT_EQ(index.version, 1);
  EXPECT_EQ(index.metadata.at("step"), "3");
  EXPECT_EQ(FilesIn(dir), (std::set<std::string>{"index.json", "v1-rank0.safetensors",
                                                  "v1-rank2.safetensors"}));
  const std::string out = dir + ".export.safetensors";
  ASSERT_TRUE(checkpoint::ExportCheckpoint(dir, out).ok());
  std::unique_ptr<checkpoint::SafetensorsFile> f = *checkpoint::SafetensorsFile::Open(out);
  EXPECT_TRUE(ExactlyEqual(*f->Read("w"), kW));
  EXPECT_TRUE(ExactlyEqual(*f->Read("b"), kB));
}

// Names from the caller and from files reach messages escaped and cut: a
// NUL, an ANSI escape and 2,000 characters in a tensor name.
TEST(CheckpointTest, NamesInMessagesAreEscapedAndCut) {
  std::unique_ptr<engine::Engine> engine = *engine::Engine::Create();
  const std::string dir = FreshDir("hostile");
  SaveFrom22(*engine, dir, "(S(0), B)", "(B, B)");
  const std::string name = std::string("v\0\x1b[31mred", 10) + std::string(2000, 'n');
  std::vector<absl::Status> st = LoadW(*engine, dir, 2, std::nullopt, name);
  ASSERT_THAT(st[0], StatusIs(absl::StatusCode::kNotFound)) << st[0];
  const std::string m(st[0].message());
  EXPECT_NE(m.find("no tensor 'v\\x00\\x1b[31mrednnn"), std::string::npos) << m;
  EXPECT_NE(m.find("...' (2010 characters) (it has 'b', 'w')"), std::string::npos) << m;
  EXPECT_LT(m.size(), 400u) << m;
  for (char c : m) EXPECT_FALSE(static_cast<unsigned char>(c) < 0x20) << absl::CEscape(m);
}

// index.json is read as strict JSON: a repeated tensor name (protobuf's
// reader kept the last entry), trailing commas and single quotes are
// errors naming the file; a member of the wrong type is named, not read
// as empty.
TEST(CheckpointTest, TheIndexIsStrictJson) {
  std::unique_ptr<engine::Engine> engine = *engine::Engine::Create();
  const std::string dir = FreshDir("strict");
  SaveFrom22(*engine, dir, "(S(0), B)", "(B, B)");
  const std::string path = dir + "/index.json";
  const std::string good = ReadText(path);
  ASSERT_TRUE(checkpoint::ReadCheckpointIndex(dir).ok());
  const size_t w = good.find("\"w\": ");
  ASSERT_NE(w, std::string::npos) << good;
  const size_t w_end = good.find("]}", w) + 2;
  const std::string w_entry = good.substr(w, w_end - w);
  struct Case {
    std::string json;
    std::string needle;
  };
  const std::vector<Case> cases = {
      {absl::StrCat(good.substr(0, w_end), ", ", w_entry, good.substr(w_end)),
       "not valid JSON: byte"},
      {absl::StrCat(good.substr(0, w_end), ",", good.substr(w_end)),
       "expected a double-quoted key, got '}'"},
      {absl::StrCat("{'format'", good.substr(good.find(':'))), "a double-quoted key"},
      {absl::StrReplaceAll(good, {{"\"version\": 1", "\"version\": \"1\""}}),
       "field 'version' must be a number, not a string"},
      {absl::StrReplaceAll(good, {{"\"nd_sbp\": \"(S(0), B)\"", "\"nd_sbp\": 3"}}),
       "tensor 'w': field 'nd_sbp' must be a string, not a number"},
      {absl::StrReplaceAll(good, {{"\"format\": \"oneflow_sbp.checkpoint\"",
                                   "\"format\": \"x\\u001b[2J\""}}),
       "field 'format' is 'x\\x1b[2J'"},
  };
  for (size_t i = 0; i < cases.size(); ++i) {
    std::ofstream(path, std::ios::trunc) << cases[i].json;
    const absl::Status s = checkpoint::ReadCheckpointIndex(dir).status();
    EXPECT_THAT(s, StatusIs(absl::StatusCode::kDataLoss)) << i << ": " << s;
    EXPECT_NE(s.message().find(cases[i].needle), std::string::npos) << i << ": " << s;
    EXPECT_NE(s.message().find(path), std::string::npos) << s;
  }
  std::ofstream(path, std::ios::trunc) << cases[0].json;
  EXPECT_NE(checkpoint::ReadCheckpointIndex(dir).status().message().find("duplicate key 'w'"),
            std::string::npos);
}

TEST(CheckpointTest, ASecondSaveCommitsANewVersionAndRemovesTheOld) {
  std::unique_ptr<engine::Engine> engine = *engine::Engine::Create();
  const std::string dir = FreshDir("versions");
  SaveFrom22(*engine, dir, "(S(0), B)", "(B, B)", 1);
  SaveFrom22(*engine, dir, "(B, S(1))", "(B, B)", 2);
  checkpoint::CheckpointIndex index = *checkpoint::ReadCheckpointIndex(dir);
  EXPECT_EQ(index.version, 2);
  EXPECT_EQ(FilesIn(dir), (std::set<std::string>{"index.json", "v2-rank0.safetensors",
                                                  "v2-rank1.safetensors"}));
  // Export gives the second version's values whole.
  const std::string out = dir + ".export.safetensors";
  ASSERT_TRUE(checkpoint::ExportCheckpoint(dir, out).ok());
  std::unique_ptr<checkpoint::SafetensorsFile> f = *checkpoint::SafetensorsFile::Open(out);
  EXPECT_TRUE(ExactlyEqual(*f->Read("w"), Values({6, 4}, 2)));
  EXPECT_EQ(f->metadata().at("step"), "3");
  const std::string text = checkpoint::CheckpointIndexToText(index);
  EXPECT_NE(text.find("w  f32[6,4]  saved (B, S(1)) on cpu:0-3 [2,2]  2 pieces"), std::string::npos)
      << text;
  EXPECT_NE(text.find("v2-rank1.safetensors  w@1  [0,6)x[2,4)  48 bytes  crc32c"), std::string::npos)
      << text;
}

}  // namespace
}  // namespace oneflow_sbp::io
