#include "checkpoint/checkpoint.h"

#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <memory>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "eager/tensor_layout.h"
#include "io/json_string.h"
#include "io/json_value.h"
#include "checkpoint/safetensors.h"
#include "oneflow_sbp/values/quoted_input.h"
#include "oneflow_sbp/values/nd_sbp_validation.h"
#include "comm/reduce_op.h"
#include "oneflow_sbp/values/status_macros.h"
#include "runtime/region_copy.h"

namespace oneflow_sbp::checkpoint {
namespace {

using eager::GlobalTensor;

constexpr char kIndexFile[] = "index.json";
constexpr char kFormat[] = "oneflow_sbp.checkpoint";

// CRC-32C (Castagnoli), reflected, table-driven: the checksum of a piece's
// bytes as written.
uint32_t Crc32c(const void* data, int64_t size) {
  static const std::array<uint32_t, 256> table = [] {
    std::array<uint32_t, 256> t{};
    for (uint32_t i = 0; i < 256; ++i) {
      uint32_t c = i;
      for (int k = 0; k < 8; ++k) c = (c & 1) ? (c >> 1) ^ 0x82F63B78u : c >> 1;
      t[i] = c;
    }
    return t;
  }();
  uint32_t crc = 0xFFFFFFFFu;
  const auto* p = static_cast<const unsigned char*>(data);
  for (int64_t i = 0; i < size; ++i) crc = table[(crc ^ p[i]) & 0xFF] ^ (crc >> 8);
  return crc ^ 0xFFFFFFFFu;
}

std::string RankFile(int64_t version, int64_t rank) {
  return absl::StrCat("v", version, "-rank", rank, ".safetensors");
}

std::string CrcKey(const std::string& key) { return absl::StrCat("crc32c:", key); }

bool IsSafetensorsFile(const std::string& source) {
  struct stat st;
  return ::stat(source.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

// The shard files of a checkpoint source, each opened once on first use:
// DIR/<file> for a directory, the file itself for a plain .safetensors.
class PieceFiles {
 public:
  explicit PieceFiles(const std::string& source)
      : source_(source), plain_(IsSafetensorsFile(source)) {}

  // The path of a piece's file.
  std::string Path(const std::string& file) const {
    return plain_ ? source_ : absl::StrCat(source_, "/", file);
  }
  // A file that fails to open is not cached: the next call tries again.
  absl::StatusOr<SafetensorsFile*> Open(const std::string& file) {
    auto it = files_.find(file);
    if (it != files_.end()) return it->second.get();
    OFS_ASSIGN_OR_RETURN(std::unique_ptr<SafetensorsFile> opened,
        SafetensorsFile::Open(Path(file)));
    return files_.emplace(file, std::move(opened)).first->second.get();
  }
  // Payload bytes read from every file opened so far.
  int64_t bytes_read() const {
    int64_t n = 0;
    for (const auto& [name, f] : files_) n += f->bytes_read();
    return n;
  }

 private:
  const std::string source_;
  const bool plain_;
  std::map<std::string, std::unique_ptr<SafetensorsFile>> files_;
};

// `s` with the same code, naming the checkpoint (directory or file) and
// the tensor it concerns.
absl::Status InTensor(const std::string& source, const std::string& tensor, const absl::Status& s) {
  return absl::Status(s.code(), absl::StrCat("checkpoint ", QuotedPath(source), ": tensor ",
                                             QuotedInput(tensor), ": ", s.message()));
}

// A failure to open or read piece `key` of tensor `tensor` from `path`,
// with the same code, naming the file, the tensor and the piece. The
// reader's own messages start with the path; it is not repeated.
absl::Status PieceError(const absl::Status& s, const std::string& path, const std::string& tensor,
                        const std::string& key) {
  const std::string prefix = absl::StrCat(QuotedPath(path), ": ");
  absl::string_view inner = s.message();
  absl::ConsumePrefix(&inner, prefix);
  return absl::Status(s.code(), absl::StrCat(prefix, "tensor ", QuotedInput(tensor), ": piece ",
                                             QuotedInput(key), ": ", inner));
}

// Every rank learns whether any rank failed: the failing rank keeps its
// own error, the others get one saying another rank failed.
absl::Status Agree(eager::EagerContext& ctx, const absl::Status& mine, const std::string& what) {
  int32_t flag = mine.ok() ? 0 : 1;
  comm::CallOptions o = ctx.call_options();
  o.reduce_op = comm::ReduceOp::kMax;
  absl::Status s = ctx.world().AllReduce(&flag, &flag, 1, DataType::kInt32, o);
  if (!s.ok()) return mine.ok() ? s : mine;
  OFS_RETURN_IF_ERROR(mine);
  if (flag != 0) {
    return absl::AbortedError(absl::StrCat(what, ": another rank failed (its error names the "
                                           "file and tensor)"));
  }
  return absl::OkStatus();
}

std::string RegionJson(const TensorSlice& r) {
  std::vector<std::string> dims;
  for (int d = 0; d < r.rank(); ++d) {
    dims.push_back(absl::StrCat("[", r.range(d).begin, ",", r.range(d).end, "]"));
  }
  return absl::StrCat("[", absl::StrJoin(dims, ","), "]");
}

std::string IndexToJson(const CheckpointIndex& index) {
  std::string out = absl::StrCat("{\n  \"format\": \"", kFormat, "\",\n  \"version\": ",
                                 index.version, ",\n  \"metadata\": {");
  bool first = true;
  for (const auto& [k, v] : index.metadata) {
    absl::StrAppend(&out, first ? "" : ", ", io::JsonString(k), ": ", io::JsonString(v));
    first = false;
  }
  out += "},\n  \"tensors\": {";
  for (size_t i = 0; i < index.tensors.size(); ++i) {
    const CheckpointTensor& t = index.tensors[i];
    std::vector<std::string> dims;
    for (int64_t d : t.desc.shape.dims()) dims.push_back(absl::StrCat(d));
    absl::StrAppend(&out, i ? "," : "", "\n    ", io::JsonString(t.name), ": {\"dtype\": \"",
                    DataTypeName(t.desc.dtype), "\", \"shape\": [", absl::StrJoin(dims, ", "),
                    "], \"nd_sbp\": ", io::JsonString(t.nd_sbp), ", \"placement\": ",
                    io::JsonString(t.placement), ", \"pieces\": [");
    for (size_t k = 0; k < t.pieces.size(); ++k) {
      const CheckpointPiece& p = t.pieces[k];
      absl::StrAppend(&out, k ? ", " : "", "\n      {\"file\": ", io::JsonString(p.file),
                      ", \"key\": ", io::JsonString(p.key), ", \"region\": ", RegionJson(p.region),
                      ", \"bytes\": ", p.bytes, ", \"crc32c\": ", p.crc32c.value_or(0), "}");
    }
    out += "]}";
  }
  out += "\n  }\n}\n";
  return out;
}

absl::StatusOr<int64_t> JsonInt(const io::JsonValue& v, const std::string& where) {
  if (v.kind != io::JsonValue::kNumber || v.number < 0 || v.number > 9007199254740992.0 ||
      static_cast<double>(static_cast<int64_t>(v.number)) != v.number) {
    return absl::InvalidArgumentError(absl::StrCat(where, " must be a non-negative integer"));
  }
  return static_cast<int64_t>(v.number);
}

// The index is read strictly (io/json_value.h): a repeated tensor name or
// field is an error, as are members of the wrong JSON type, rather than
// read as the last one or as an empty value.
absl::StatusOr<CheckpointIndex> ParseIndex(const std::string& json, const std::string& path) {
  auto bad = [&](const std::string& what) {
    return absl::DataLossError(absl::StrCat(QuotedPath(path), ": ", what));
  };
  absl::StatusOr<io::JsonValue> root = io::ParseStrictJson(json);
  if (!root.ok()) return bad(absl::StrCat("not valid JSON: ", root.status().message()));
  if (root->kind != io::JsonValue::kObject) {
    return bad(absl::StrCat("not a JSON object but ", io::JsonValue::KindName(root->kind)));
  }
  // A member of `obj` that must have kind `kind`; `what` names it.
  auto member = [&](const io::JsonValue& obj, absl::string_view key, io::JsonValue::Kind kind,
                    const std::string& what) -> absl::StatusOr<const io::JsonValue*> {
    const io::JsonValue* v = obj.Find(key);
    if (v == nullptr) return bad(absl::StrCat(what, "field '", key, "' is missing"));
    if (v->kind != kind) {
      return bad(absl::StrCat(what, "field '", key, "' must be ", io::JsonValue::KindName(kind),
                              ", not ", io::JsonValue::KindName(v->kind)));
    }
    return v;
  };
  OFS_ASSIGN_OR_RETURN(const io::JsonValue* format, member(*root, "format",
      io::JsonValue::kString, ""));
  if (format->string != kFormat) {
    return bad(absl::StrCat("field 'format' is ", QuotedInput(format->string), "; must be \"",
                            kFormat, "\""));
  }
  CheckpointIndex index;
  index.source = path;
  OFS_ASSIGN_OR_RETURN(const io::JsonValue* version, member(*root, "version",
      io::JsonValue::kNumber, ""));
  absl::StatusOr<int64_t> v = JsonInt(*version, "field 'version'");
  if (!v.ok()) return bad(std::string(v.status().message()));
  index.version = *v;
  if (root->Find("metadata") != nullptr) {
    OFS_ASSIGN_OR_RETURN(const io::JsonValue* meta, member(*root, "metadata",
        io::JsonValue::kObject, ""));
    for (const auto& [k, val] : meta->object) {
      if (val.kind != io::JsonValue::kString) {
        return bad(absl::StrCat("field 'metadata': ", QuotedInput(k), " must be a string"));
      }
      index.metadata[k] = val.string;
    }
  }
  OFS_ASSIGN_OR_RETURN(const io::JsonValue* tensors, member(*root, "tensors",
      io::JsonValue::kObject, ""));
  for (const auto& [name, tv] : tensors->object) {
    const std::string where = absl::StrCat("tensor ", QuotedInput(name));
    const std::string in = where + ": ";
    if (tv.kind != io::JsonValue::kObject) return bad(where + " must be an object");
    CheckpointTensor t;
    t.name = name;
    OFS_ASSIGN_OR_RETURN(const io::JsonValue* dtype, member(tv, "dtype", io::JsonValue::kString,
        in));
    absl::StatusOr<DataType> dt = ParseDataType(dtype->string);
    if (!dt.ok()) return bad(absl::StrCat(in, dt.status().message()));
    t.desc.dtype = *dt;
    std::vector<int64_t> dims;
    OFS_ASSIGN_OR_RETURN(const io::JsonValue* shape, member(tv, "shape", io::JsonValue::kArray,
        in));
    for (const io::JsonValue& d : shape->array) {
      absl::StatusOr<int64_t> x = JsonInt(d, in + "field 'shape' entry");
      if (!x.ok()) return bad(std::string(x.status().message()));
      dims.push_back(*x);
    }
    absl::StatusOr<Shape> s = Shape::Make(dims);
    if (!s.ok()) return bad(absl::StrCat(in, s.status().message()));
    t.desc.shape = *s;
    for (auto [key, out] : {std::pair{"nd_sbp", &t.nd_sbp}, std::pair{"placement", &t.placement}}) {
      if (tv.Find(key) == nullptr) continue;
      OFS_ASSIGN_OR_RETURN(const io::JsonValue* text, member(tv, key, io::JsonValue::kString, in));
      *out = text->string;
    }
    OFS_ASSIGN_OR_RETURN(const io::JsonValue* pieces, member(tv, "pieces", io::JsonValue::kArray,
        in));
    for (const io::JsonValue& pv : pieces->array) {
      if (pv.kind != io::JsonValue::kObject) return bad(in + "a piece must be an object");
      CheckpointPiece p;
      const io::JsonValue* file = pv.Find("file");
      const io::JsonValue* key = pv.Find("key");
      const io::JsonValue* region = pv.Find("region");
      const io::JsonValue* bytes = pv.Find("bytes");
      const io::JsonValue* crc = pv.Find("crc32c");
      if (file == nullptr || key == nullptr || region == nullptr || bytes == nullptr ||
          crc == nullptr) {
        return bad(in + "a piece lacks file, key, region, bytes or crc32c");
      }
      if (file->kind != io::JsonValue::kString || key->kind != io::JsonValue::kString) {
        return bad(in + "a piece's fields 'file' and 'key' must be strings");
      }
      p.file = file->string;
      if (p.file.empty() || p.file.find('/') != std::string::npos) {
        return bad(absl::StrCat(in, "piece file ", QuotedInput(p.file),
                                " must be a plain file name"));
      }
      p.key = key->string;
      p.region = TensorSlice(t.desc.shape);
      if (region->kind != io::JsonValue::kArray || region->array.size() != dims.size()) {
        return bad(in + "a piece's field 'region' must list one [begin, end] per dim");
      }
      for (size_t d = 0; d < dims.size(); ++d) {
        const io::JsonValue& r = region->array[d];
        if (r.kind != io::JsonValue::kArray || r.array.size() != 2) {
          return bad(in + "a region range must be [begin, end]");
        }
        absl::StatusOr<int64_t> b = JsonInt(r.array[0], where);
        absl::StatusOr<int64_t> e = JsonInt(r.array[1], where);
        if (!b.ok() || !e.ok() || *b > *e || *e > dims[d]) {
          return bad(absl::StrCat(in, "piece region out of the shape"));
        }
        p.region.set_range(static_cast<int>(d), {*b, *e});
      }
      absl::StatusOr<int64_t> nb = JsonInt(*bytes, where);
      absl::StatusOr<int64_t> c = JsonInt(*crc, where);
      if (!nb.ok() || !c.ok() || *c > 0xFFFFFFFFll) return bad(in + "bad bytes or crc32c");
      p.bytes = *nb;
      p.crc32c = static_cast<uint32_t>(*c);
      t.pieces.push_back(std::move(p));
    }
    index.tensors.push_back(std::move(t));
  }
  std::sort(index.tensors.begin(), index.tensors.end(),
            [](const auto& a, const auto& b) { return a.name < b.name; });
  return index;
}

absl::StatusOr<std::string> ReadWholeFile(const std::string& path) {
  FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) {
    if (errno == ENOENT) return absl::NotFoundError(absl::StrCat("no checkpoint at ", QuotedPath(path)));
    return absl::UnavailableError(
        absl::StrCat("open ", QuotedPath(path), ": ", std::strerror(errno)));
  }
  std::string out;
  char buf[1 << 16];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof(buf), f)) > 0) {
    out.append(buf, n);
    if (out.size() > static_cast<size_t>(kMaxHeaderBytes)) {
      std::fclose(f);
      return absl::InvalidArgumentError(absl::StrCat(QuotedPath(path), ": larger than ", kMaxHeaderBytes,
                                                     " bytes"));
    }
  }
  std::fclose(f);
  return out;
}

// Files of this checkpoint directory that `index` does not name, and
// temporaries of interrupted writes: what a committed save removes.
void RemoveStaleFiles(const std::string& dir, const CheckpointIndex& index) {
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) return;
  std::vector<std::string> stale;
  while (dirent* e = ::readdir(d)) {
    const std::string name = e->d_name;
    const bool ours = (absl::StartsWith(name, "v") && absl::StrContains(name, "-rank") &&
                       absl::StrContains(name, ".safetensors")) ||
                      absl::StartsWith(name, "index.json.tmp-");
    if (!ours) continue;
    bool used = false;
    for (const CheckpointTensor& t : index.tensors) {
      for (const CheckpointPiece& p : t.pieces) used = used || p.file == name;
    }
    if (!used) stale.push_back(name);
  }
  ::closedir(d);
  for (const std::string& name : stale) ::unlink(absl::StrCat(dir, "/", name).c_str());
}

NdSbp WithoutPartials(const NdSbp& nd) {
  NdSbp out = nd;
  for (int i = 0; i < nd.size(); ++i) {
    if (nd[i].is_partial()) out.set(i, SbpParallel::Broadcast());
  }
  return out;
}

}  // namespace

const CheckpointTensor* CheckpointIndex::Find(const std::string& name) const {
  for (const CheckpointTensor& t : tensors) {
    if (t.name == name) return &t;
  }
  return nullptr;
}

absl::StatusOr<CheckpointIndex> ReadCheckpointIndex(const std::string& source) {
  if (IsSafetensorsFile(source)) {
    OFS_ASSIGN_OR_RETURN(std::unique_ptr<SafetensorsFile> f, SafetensorsFile::Open(source));
    CheckpointIndex index;
    index.source = source;
    index.metadata = f->metadata();
    const size_t slash = source.rfind('/');
    const std::string file = slash == std::string::npos ? source : source.substr(slash + 1);
    for (const SafetensorsEntry& e : f->entries()) {
      if (!e.data_type) continue;  // I16: listed by the reader, not loadable
      absl::StatusOr<Shape> shape = Shape::Make(e.shape);
      if (!shape.ok()) continue;  // zero-size: the engine has no such shape
      CheckpointTensor t;
      t.name = e.name;
      t.desc = TensorDesc{*shape, *e.data_type};
      t.nd_sbp = "(B)";
      t.placement = "cpu:0";
      t.pieces.push_back({file, e.name, TensorSlice(*shape), e.end - e.begin, std::nullopt});
      index.tensors.push_back(std::move(t));
    }
    std::sort(index.tensors.begin(), index.tensors.end(),
              [](const auto& a, const auto& b) { return a.name < b.name; });
    return index;
  }
  const std::string path = absl::StrCat(source, "/", kIndexFile);
  OFS_ASSIGN_OR_RETURN(std::string json, ReadWholeFile(path));
  absl::StatusOr<CheckpointIndex> index = ParseIndex(json, path);
  if (index.ok()) index->source = source;
  return index;
}

// Every failure of a save, on any rank, reaches the other ranks through an
// agreement (Agree) before anyone issues another collective, so a rank that
// fails alone makes every rank return an error at the next agreement
// instead of leaving them waiting in a collective it never joins. The
// agreements, in order:
//   1. the arguments are valid and DIR exists (before any collective);
//   2. after each partial-sum reduction (a collective of every rank);
//   3. every rank's shard file is on disk (slices, device copies, writes);
//   4. rank 0 committed the index.
absl::Status SaveCheckpoint(eager::EagerContext& ctx, const std::string& dir,
                            absl::Span<const NamedTensor> tensors,
                            const std::map<std::string, std::string>& metadata) {
  const std::string what = absl::StrCat("checkpoint save to ", QuotedPath(dir));
  absl::Status status;
  for (size_t i = 0; i < tensors.size() && status.ok(); ++i) {
    if (tensors[i].name.empty() || !tensors[i].tensor.defined()) {
      status = absl::InvalidArgumentError(
          absl::StrCat("checkpoint ", QuotedPath(dir), ": tensor ", i, " has no name or no value"));
    }
    for (size_t j = 0; j < i && status.ok(); ++j) {
      if (tensors[j].name == tensors[i].name) {
        status = absl::InvalidArgumentError(absl::StrCat(
            "checkpoint ", QuotedPath(dir), ": tensor ", QuotedInput(tensors[i].name), " given twice"));
      }
    }
  }
  // Every rank reads the old version before anyone commits a new one.
  int64_t version = 1;
  if (absl::StatusOr<CheckpointIndex> old = ReadCheckpointIndex(dir); old.ok()) {
    version = old->version + 1;
  }
  if (status.ok() && ::mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST) {
    status = absl::UnavailableError(absl::StrCat("mkdir ", QuotedPath(dir), ": ", std::strerror(errno)));
  }
  if (absl::Status s = Agree(ctx, status, what); !s.ok()) return s;
  // Partial sums are reduced once (P -> B), then saved like any other
  // layout. Every rank reduces the same tensors in the same order.
  std::vector<GlobalTensor> stored(tensors.size());
  for (size_t i = 0; i < tensors.size(); ++i) {
    const GlobalTensor& t = tensors[i].tensor;
    const NdSbp without = WithoutPartials(t.nd_sbp());
    if (without == t.nd_sbp()) {
      stored[i] = t;
      continue;
    }
    absl::StatusOr<GlobalTensor> r = eager::Redistribute(ctx, t, t.placement(), without);
    const absl::Status reduced = r.ok() ? absl::OkStatus() : InTensor(dir, tensors[i].name, r.status());
    if (absl::Status s = Agree(ctx, reduced, what); !s.ok()) return s;
    stored[i] = *std::move(r);
  }
  CheckpointIndex index;
  index.version = version;
  index.metadata = metadata;
  std::vector<std::pair<std::string, LocalTensor>> mine;
  std::map<std::string, std::string> my_crcs;
  for (size_t i = 0; i < tensors.size() && status.ok(); ++i) {
    const std::string& name = tensors[i].name;
    const GlobalTensor& t = stored[i];
    CheckpointTensor ct;
    ct.name = name;
    ct.desc = t.desc();
    ct.nd_sbp = t.nd_sbp().ToString();
    ct.placement = t.placement().ToString();
    absl::StatusOr<std::vector<TensorSlice>> slices =
        AllRankSlices(t.shape(), t.nd_sbp(), t.placement());
    if (!slices.ok()) {
      status = InTensor(dir, name, slices.status());
      break;
    }
    absl::StatusOr<int64_t> my_id = t.placement().ParallelIdOf(ctx.rank());
    for (int64_t id = 0; id < static_cast<int64_t>(slices->size()); ++id) {
      const TensorSlice& s = (*slices)[id];
      if (s.elem_cnt() == 0) continue;
      bool seen = false;  // owned by the lowest parallel_id holding it
      for (int64_t j = 0; j < id && !seen; ++j) seen = (*slices)[j] == s;
      if (seen) continue;
      const int64_t owner = t.placement().RankOf(id);
      CheckpointPiece p;
      p.file = RankFile(version, owner);
      p.key = absl::StrCat(name, "@", ct.pieces.size());
      p.region = s;
      p.bytes = s.elem_cnt() * ByteSizeOf(t.dtype());
      if (my_id.ok() && *my_id == id) {
        LocalTensor local = t.local();
        if (local.device() != DeviceType::kCpu) {
          absl::StatusOr<LocalTensor> host = local.CopyTo(DeviceType::kCpu);
          if (!host.ok()) {
            status = InTensor(dir, name, host.status());
            break;
          }
          local = *host;
        }
        my_crcs[CrcKey(p.key)] = absl::StrCat(Crc32c(local.raw_data(), local.byte_size()));
        mine.emplace_back(p.key, local);
      }
      ct.pieces.push_back(std::move(p));
    }
    index.tensors.push_back(std::move(ct));
  }
  const std::string my_file = absl::StrCat(dir, "/", RankFile(version, ctx.rank()));
  const bool writes = status.ok() && !mine.empty();
  if (writes) status = WriteSafetensors(my_file, mine, my_crcs);
  // No rank commits unless every rank's pieces are on disk. A failed save
  // takes back the shard file it wrote: no index names it.
  if (absl::Status s = Agree(ctx, status, what); !s.ok()) {
    if (writes && status.ok()) ::unlink(my_file.c_str());
    return s;
  }
  if (ctx.rank() == 0) {
    // The checksums each owner computed travel in its file's metadata.
    PieceFiles files(dir);
    for (CheckpointTensor& t : index.tensors) {
      for (CheckpointPiece& p : t.pieces) {
        if (!status.ok()) break;
        absl::StatusOr<SafetensorsFile*> f = files.Open(p.file);
        if (!f.ok()) {
          status = PieceError(f.status(), files.Path(p.file), t.name, p.key);
          break;
        }
        auto crc = (*f)->metadata().find(CrcKey(p.key));
        uint32_t value = 0;
        if (crc == (*f)->metadata().end() || !absl::SimpleAtoi(crc->second, &value)) {
          status = absl::DataLossError(absl::StrCat(QuotedPath(files.Path(p.file)), ": tensor ",
                                                    QuotedInput(t.name), ": no checksum for piece ",
                                                    QuotedInput(p.key)));
          break;
        }
        p.crc32c = value;
      }
    }
    std::sort(index.tensors.begin(), index.tensors.end(),
              [](const auto& a, const auto& b) { return a.name < b.name; });
    if (status.ok()) {
      status = WriteFileAtomically(absl::StrCat(dir, "/", kIndexFile), IndexToJson(index));
    }
    // Files of older versions go before the ranks agree (and return): a
    // rank that starts the next save at once cannot have its new shard
    // file taken for a stale one.
    if (status.ok()) RemoveStaleFiles(dir, index);
  }
  return Agree(ctx, status, what);
}

absl::StatusOr<std::vector<GlobalTensor>> LoadCheckpoint(eager::EagerContext& ctx,
                                                         const std::string& source,
                                                         absl::Span<const CheckpointTarget> targets,
                                                         LoadStats* stats) {
  std::vector<GlobalTensor> out;
  absl::Status status;
  absl::StatusOr<CheckpointIndex> index = ReadCheckpointIndex(source);
  PieceFiles files(source);
  if (!index.ok()) status = index.status();
  for (size_t i = 0; i < targets.size() && status.ok(); ++i) {
    const CheckpointTarget& target = targets[i];
    const CheckpointTensor* t = index->Find(target.name);
    if (t == nullptr) {
      std::vector<std::string> names;
      for (const CheckpointTensor& x : index->tensors) names.push_back(QuotedInput(x.name));
      if (names.size() > 8) names.resize(8), names.push_back("...");
      status = absl::NotFoundError(absl::StrCat("checkpoint ", QuotedPath(source), ": no tensor ",
                                                QuotedInput(target.name), " (it has ",
                                                absl::StrJoin(names, ", "), ")"));
      break;
    }
    if (target.expect && *target.expect != t->desc) {
      status = absl::InvalidArgumentError(absl::StrCat(
          "checkpoint ", QuotedPath(source), ": tensor ", QuotedInput(t->name), " is ",
          t->desc.ToString(),
          "; expected ", target.expect->ToString()));
      break;
    }
    status = ValidateNdSbp(target.nd_sbp, t->desc.shape, target.placement.hierarchy());
    if (!status.ok()) {
      status = InTensor(source, t->name, absl::InvalidArgumentError(status.message()));
      break;
    }
    absl::StatusOr<int64_t> id = target.placement.ParallelIdOf(ctx.rank());
    if (!id.ok()) {
      out.emplace_back(t->desc, target.placement, target.nd_sbp, LocalTensor());
      continue;
    }
    const MeshCoord coord = target.placement.CoordinateOf(*id);
    const TensorSlice slice =
        SliceAt(t->desc.shape, target.nd_sbp, target.placement.hierarchy(), coord);
    std::vector<int64_t> dims;
    for (int d = 0; d < slice.rank(); ++d) dims.push_back(slice.range(d).size());
    absl::StatusOr<LocalTensor> local = LocalTensor::Zeros(t->desc.dtype, dims);
    if (!local.ok()) {
      status = InTensor(source, t->name, local.status());
      break;
    }
    bool reads = true;  // on P axes only coordinate 0 holds the value
    for (int a = 0; a < target.nd_sbp.size(); ++a) {
      reads = reads && (!target.nd_sbp[a].is_partial_sum() || coord[a] == 0);
    }
    int64_t covered = 0;
    for (const CheckpointPiece& p : t->pieces) {
      if (!reads || !status.ok()) break;
      const TensorSlice overlap = slice.Intersect(p.region);
      if (overlap.elem_cnt() == 0) continue;
      absl::StatusOr<SafetensorsFile*> f = files.Open(p.file);
      if (!f.ok()) {
        status = PieceError(f.status(), files.Path(p.file), t->name, p.key);
        break;
      }
      const std::string where =
          absl::StrCat(QuotedPath((*f)->path()), ": tensor ", QuotedInput(t->name));
      absl::StatusOr<LocalTensor> data;
      TensorSlice data_slice = p.region;
      if (p.crc32c) {
        data = (*f)->Read(p.key);  // the whole piece, so its checksum can be checked
        if (data.ok() && Crc32c(data->raw_data(), data->byte_size()) != *p.crc32c) {
          status = absl::DataLossError(absl::StrCat(where, ": piece ", QuotedInput(p.key),
                                                    " fails its checksum (altered or damaged)"));
          break;
        }
      } else {
        data = (*f)->ReadRegion(p.key, overlap);  // a plain file: only the overlap's bytes
        data_slice = overlap;
      }
      if (!data.ok()) {
        status = PieceError(data.status(), (*f)->path(), t->name, p.key);
        break;
      }
      if (data->dtype() != t->desc.dtype) {
        status = absl::DataLossError(absl::StrCat(where, ": piece ", QuotedInput(p.key), " is ",
                                                  DataTypeName(data->dtype()), ", the index says ",
                                                  DataTypeName(t->desc.dtype)));
        break;
      }
      status = runtime::CopyRegion(*data, data_slice, overlap, &*local, slice,
                                  runtime::RegionOp::kCopy);
      if (!status.ok()) {
        status = absl::DataLossError(absl::StrCat(where, ": piece ", QuotedInput(p.key), ": ",
                                                  status.message()));
        break;
      }
      covered += overlap.elem_cnt();
      if (stats != nullptr) ++stats->pieces_read;
    }
    if (!status.ok()) break;
    if (reads && covered != slice.elem_cnt()) {
      status = absl::DataLossError(absl::StrCat("checkpoint ", QuotedPath(source), ": tensor ",
                                                QuotedInput(t->name), ": its pieces cover ", covered, " of the ",
                                                slice.elem_cnt(), " elements rank ", ctx.rank(),
                                                " needs"));
      break;
    }
    if (target.placement.device_type() != DeviceType::kCpu) {
      local = local->CopyTo(target.placement.device_type());
      if (!local.ok()) {
        status = InTensor(source, t->name, local.status());
        break;
      }
    }
    out.emplace_back(t->desc, target.placement, target.nd_sbp, *std::move(local));
  }
  if (stats != nullptr) {
    stats->bytes_read += files.bytes_read();
  }
  absl::Status agreed = Agree(ctx, status, absl::StrCat("checkpoint load from ", QuotedPath(source)));
  OFS_RETURN_IF_ERROR(agreed);
  return out;
}

absl::Status ExportCheckpoint(const std::string& source, const std::string& out_file) {
  OFS_ASSIGN_OR_RETURN(CheckpointIndex index, ReadCheckpointIndex(source));
  std::vector<std::pair<std::string, LocalTensor>> whole;
  PieceFiles files(source);
  for (const CheckpointTensor& t : index.tensors) {
    OFS_ASSIGN_OR_RETURN(LocalTensor full, LocalTensor::Zeros(t.desc.dtype, t.desc.shape.dims()));
    const TensorSlice all(t.desc.shape);
    int64_t covered = 0;
    for (const CheckpointPiece& p : t.pieces) {
      absl::StatusOr<SafetensorsFile*> f = files.Open(p.file);
      if (!f.ok()) return PieceError(f.status(), files.Path(p.file), t.name, p.key);
      absl::StatusOr<LocalTensor> data = (*f)->Read(p.key);
      if (!data.ok()) return PieceError(data.status(), (*f)->path(), t.name, p.key);
      const std::string where = absl::StrCat(QuotedPath((*f)->path()), ": tensor ",
                                             QuotedInput(t.name), ": piece ", QuotedInput(p.key));
      if (p.crc32c && Crc32c(data->raw_data(), data->byte_size()) != *p.crc32c) {
        return absl::DataLossError(absl::StrCat(where, " fails its checksum"));
      }
      if (data->dtype() != t.desc.dtype) {
        return absl::DataLossError(absl::StrCat(where, " is ", DataTypeName(data->dtype()),
                                                ", the index says ", DataTypeName(t.desc.dtype)));
      }
      absl::Status s =
          runtime::CopyRegion(*data, p.region, p.region, &full, all, runtime::RegionOp::kCopy);
      if (!s.ok()) return absl::DataLossError(absl::StrCat(where, ": ", s.message()));
      covered += p.region.elem_cnt();
    }
    if (covered != all.elem_cnt()) {
      return absl::DataLossError(absl::StrCat(QuotedPath(source), ": tensor ", QuotedInput(t.name),
                                              ": pieces cover ",
                                              covered, " of ", all.elem_cnt(), " elements"));
    }
    whole.emplace_back(t.name, std::move(full));
  }
  return WriteSafetensors(out_file, whole, index.metadata);
}

std::string CheckpointIndexToText(const CheckpointIndex& index) {
  int64_t bytes = 0;
  std::map<std::string, int64_t> files;
  for (const CheckpointTensor& t : index.tensors) {
    for (const CheckpointPiece& p : t.pieces) {
      bytes += p.bytes;
      files[p.file] += p.bytes;
    }
  }
  std::string out = absl::StrFormat("checkpoint %s: version %d, %d tensors, %d files, %d bytes\n",
                                    index.source, index.version, index.tensors.size(),
                                    files.size(), bytes);
  if (!index.metadata.empty()) {
    std::vector<std::string> kv;
    for (const auto& [k, v] : index.metadata) kv.push_back(absl::StrCat(k, "=", v));
    absl::StrAppend(&out, "metadata: ", absl::StrJoin(kv, " "), "\n");
  }
  for (const CheckpointTensor& t : index.tensors) {
    absl::StrAppend(&out, absl::StrFormat("%s  %s  saved %s on %s  %d piece%s\n", t.name,
                                          t.desc.ToString(), t.nd_sbp, t.placement,
                                          t.pieces.size(), t.pieces.size() == 1 ? "" : "s"));
    for (const CheckpointPiece& p : t.pieces) {
      absl::StrAppend(&out, absl::StrFormat(
                                "  %s  %s  %s  %d bytes%s\n", p.file, p.key, p.region.ToString(),
                                p.bytes,
                                p.crc32c ? absl::StrFormat("  crc32c %08x", *p.crc32c) : ""));
    }
  }
  return out;
}

}  // namespace oneflow_sbp::checkpoint