#include "checkpoint/safetensors.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <limits>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "io/json_string.h"
#include "io/json_value.h"
#include "oneflow_sbp/values/quoted_input.h"
#include "oneflow_sbp/values/status_macros.h"

namespace oneflow_sbp::checkpoint {
namespace {

struct DtypeInfo {
  const char* name;
  int64_t itemsize;
  std::optional<DataType> type;
};

constexpr DtypeInfo kDtypes[] = {
    {"F64", 8, DataType::kFloat64}, {"F32", 4, DataType::kFloat32},
    {"F16", 2, DataType::kFloat16}, {"BF16", 2, DataType::kBFloat16},
    {"I64", 8, DataType::kInt64},   {"I32", 4, DataType::kInt32},
    {"I16", 2, std::nullopt},       {"I8", 1, DataType::kInt8},
    {"U8", 1, DataType::kUInt8},    {"BOOL", 1, DataType::kBool},
};

// Integral JSON numbers up to 2^53 (JSON numbers are doubles in the parser).
absl::StatusOr<int64_t> AsIndex(const io::JsonValue& v, const std::string& where) {
  if (v.kind != io::JsonValue::kNumber) {
    return absl::InvalidArgumentError(
        absl::StrCat(where, " must be a number, not ", io::JsonValue::KindName(v.kind)));
  }
  const double d = v.number;
  if (!(d >= 0) || d > 9007199254740992.0 || std::floor(d) != d) {
    return absl::InvalidArgumentError(
        absl::StrCat(where, " must be an integer in [0, 2^53]; got ", absl::StrFormat("%.17g", d)));
  }
  return static_cast<int64_t>(d);
}

absl::Status Errno(const std::string& what, const std::string& path) {
  const int e = errno;
  const std::string msg = absl::StrCat(what, " ", QuotedPath(path), ": ", std::strerror(e));
  if (e == ENOENT) return absl::NotFoundError(msg);
  if (e == EACCES || e == EPERM) return absl::PermissionDeniedError(msg);
  return absl::UnavailableError(msg);
}

absl::Status WriteAll(int fd, const char* data, size_t size, const std::string& path) {
  while (size > 0) {
    const ssize_t n = ::write(fd, data, size);
    if (n < 0) {
      if (errno == EINTR) continue;
      return Errno("write", path);
    }
    data += n;
    size -= static_cast<size_t>(n);
  }
  return absl::OkStatus();
}

std::string DirName(const std::string& path) {
  const size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

// Writes the pieces to a fresh temporary file beside `path`, fsyncs it,
// renames it over `path` and fsyncs the directory, so the name holds the
// old contents or the new, whatever moment the process dies at.
absl::Status CommitPieces(const std::string& path, absl::Span<const absl::string_view> pieces) {
  static std::atomic<uint64_t> counter{0};
  const std::string tmp = absl::StrCat(path, ".tmp-", ::getpid(), "-", counter++);
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) return Errno("create", tmp);
  absl::Status s;
  for (absl::string_view p : pieces) {
    s = WriteAll(fd, p.data(), p.size(), tmp);
    if (!s.ok()) break;
  }
  if (s.ok() && ::fsync(fd) != 0) s = Errno("fsync", tmp);
  if (::close(fd) != 0 && s.ok()) s = Errno("close", tmp);
  if (s.ok() && ::rename(tmp.c_str(), path.c_str()) != 0) s = Errno("rename to", path);
  if (!s.ok()) {
    ::unlink(tmp.c_str());
    return s;
  }
  const std::string dir = DirName(path);
  const int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    ::fsync(dfd);
    ::close(dfd);
  }
  return absl::OkStatus();
}

}  // namespace

absl::string_view SafetensorsDtypeName(DataType dtype) {
  for (const DtypeInfo& d : kDtypes) {
    if (d.type == dtype) return d.name;
  }
  return "F32";
}

absl::StatusOr<SafetensorsHeader> ParseSafetensorsHeader(absl::string_view json,
                                                         int64_t data_start, int64_t data_size,
                                                         absl::string_view file) {
  const std::string qfile = QuotedPath(file);
  absl::StatusOr<io::JsonValue> root = io::ParseStrictJson(json);
  if (!root.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat(qfile, ": the header is not valid JSON: ", root.status().message()));
  }
  if (root->kind != io::JsonValue::kObject) {
    return absl::InvalidArgumentError(absl::StrCat(qfile, ": the header is not a JSON object but ",
                                                   io::JsonValue::KindName(root->kind)));
  }
  SafetensorsHeader h;
  h.data_start = data_start;
  for (const auto& [name, value] : root->object) {
    const std::string where = absl::StrCat(qfile, ": tensor ", QuotedInput(name));
    if (name == "__metadata__") {
      if (value.kind != io::JsonValue::kObject) {
        return absl::InvalidArgumentError(absl::StrCat(qfile, ": __metadata__ must be an object"));
      }
      for (const auto& [k, v] : value.object) {
        if (v.kind != io::JsonValue::kString) {
          return absl::InvalidArgumentError(absl::StrCat(qfile, ": __metadata__ field ",
                                                         QuotedInput(k), " must be a string"));
        }
        h.metadata[k] = v.string;
      }
      continue;
    }
    if (value.kind != io::JsonValue::kObject) {
      return absl::InvalidArgumentError(absl::StrCat(where, " must be an object"));
    }
    for (const auto& [k, v] : value.object) {
      if (k != "dtype" && k != "shape" && k != "data_offsets") {
        return absl::InvalidArgumentError(absl::StrCat(where, ": unknown field ", QuotedInput(k)));
      }
    }
    SafetensorsEntry e;
    e.name = name;
    const io::JsonValue* dtype = value.Find("dtype");
    if (dtype == nullptr || dtype->kind != io::JsonValue::kString) {
      return absl::InvalidArgumentError(absl::StrCat(where, ": field 'dtype' must be a string"));
    }
    e.dtype = dtype->string;
    const DtypeInfo* info = nullptr;
    for (const DtypeInfo& d : kDtypes) {
      if (e.dtype == d.name) info = &d;
    }
    if (info == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat(
          where, ": field 'dtype' is ", QuotedInput(e.dtype),
          "; known: F64 F32 F16 BF16 I64 I32 I16 I8 U8 BOOL"));
    }
    e.data_type = info->type;
    e.itemsize = info->itemsize;
    const io::JsonValue* shape = value.Find("shape");
    if (shape == nullptr || shape->kind != io::JsonValue::kArray) {
      return absl::InvalidArgumentError(absl::StrCat(where, ": field 'shape' must be a list"));
    }
    if (shape->array.size() > static_cast<size_t>(Shape::kMaxRank)) {
      return absl::InvalidArgumentError(
          absl::StrCat(where, ": field 'shape' has more than ", Shape::kMaxRank, " dims"));
    }
    int64_t bytes = e.itemsize;
    for (const io::JsonValue& d : shape->array) {
      OFS_ASSIGN_OR_RETURN(int64_t v, AsIndex(d, absl::StrCat(where, ": field 'shape' entry")));
      e.shape.push_back(v);
      if (v != 0 && bytes > std::numeric_limits<int64_t>::max() / v) {
        return absl::InvalidArgumentError(absl::StrCat(where, ": field 'shape' overflows"));
      }
      bytes *= v;
    }
    const io::JsonValue* offsets = value.Find("data_offsets");
    if (offsets == nullptr || offsets->kind != io::JsonValue::kArray || offsets->array.size() != 2) {
      return absl::InvalidArgumentError(
          absl::StrCat(where, ": field 'data_offsets' must be a list [begin, end]"));
    }
    OFS_ASSIGN_OR_RETURN(int64_t b, AsIndex(offsets->array[0],
        where + ": field 'data_offsets' begin"));
    OFS_ASSIGN_OR_RETURN(int64_t en, AsIndex(offsets->array[1],
        where + ": field 'data_offsets' end"));
    if (en < b || en - b != bytes) {
      return absl::InvalidArgumentError(absl::StrCat(
          where, ": field 'data_offsets' [", b, ", ", en, ") holds ", en - b,
          " bytes; shape x itemsize is ", bytes));
    }
    if (en > data_size) {
      return absl::DataLossError(absl::StrCat(
          where, ": field 'data_offsets' ends at ", en, " but the data region has ", data_size,
          " bytes (a truncated file?)"));
    }
    e.begin = data_start + b;
    e.end = data_start + en;
    h.entries.push_back(std::move(e));
  }
  std::sort(h.entries.begin(), h.entries.end(), [](const auto& a, const auto& b) {
    return a.begin != b.begin ? a.begin < b.begin : a.end < b.end;
  });
  for (size_t i = 1; i < h.entries.size(); ++i) {
    const SafetensorsEntry& prev = h.entries[i - 1];
    const SafetensorsEntry& cur = h.entries[i];
    if (cur.begin < prev.end) {
      return absl::InvalidArgumentError(
          absl::StrCat(QuotedPath(file), ": tensor ", QuotedInput(cur.name),
                       ": field 'data_offsets' overlaps tensor ", QuotedInput(prev.name)));
    }
  }
  return h;
}

absl::StatusOr<std::unique_ptr<SafetensorsFile>> SafetensorsFile::Open(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Errno("open", path);
  auto fail = [fd](absl::Status s) {
    ::close(fd);
    return s;
  };
  struct stat st;
  if (::fstat(fd, &st) != 0) return fail(Errno("stat", path));
  const int64_t size = st.st_size;
  if (size < 8) {
    return fail(absl::DataLossError(
        absl::StrCat(QuotedPath(path), ": ", size, " bytes; a safetensors file starts with an 8-byte length")));
  }
  unsigned char len_bytes[8];
  if (::pread(fd, len_bytes, 8, 0) != 8) return fail(Errno("read", path));
  uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = (n << 8) | len_bytes[i];
  if (n > static_cast<uint64_t>(kMaxHeaderBytes)) {
    return fail(absl::InvalidArgumentError(absl::StrCat(
        QuotedPath(path), ": header length ", n, " exceeds the ", kMaxHeaderBytes, "-byte limit")));
  }
  if (static_cast<int64_t>(n) > size - 8) {
    return fail(absl::DataLossError(absl::StrCat(QuotedPath(path), ": header length ", n,
                                                 " but the file has ",
                                                 size - 8, " bytes after the length")));
  }
  std::string json(n, '\0');
  int64_t got = 0;
  while (got < static_cast<int64_t>(n)) {
    const ssize_t r = ::pread(fd, json.data() + got, n - got, 8 + got);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return fail(Errno("read", path));
    got += r;
  }
  absl::StatusOr<SafetensorsHeader> h =
      ParseSafetensorsHeader(json, 8 + static_cast<int64_t>(n), size - 8 - static_cast<int64_t>(n),
                             path);
  if (!h.ok()) return fail(h.status());
  return std::unique_ptr<SafetensorsFile>(new SafetensorsFile(path, fd, *std::move(h)));
}

SafetensorsFile::~SafetensorsFile() { ::close(fd_); }

const SafetensorsEntry* SafetensorsFile::Find(absl::string_view name) const {
  for (const SafetensorsEntry& e : header_.entries) {
    if (e.name == name) return &e;
  }
  return nullptr;
}

absl::Status SafetensorsFile::PreadExactly(int64_t offset, int64_t size, void* out,
                                           const std::string& tensor) {
  char* p = static_cast<char*>(out);
  int64_t done = 0;
  while (done < size) {
    const ssize_t r = ::pread(fd_, p + done, size - done, offset + done);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) return Errno(absl::StrCat("read of tensor ", QuotedInput(tensor), " from"), path_);
    if (r == 0) {
      return absl::DataLossError(absl::StrCat(QuotedPath(path_), ": tensor ", QuotedInput(tensor),
                                              ": the file ends at ",
                                              offset + done, " (truncated since it was opened?)"));
    }
    done += r;
  }
  bytes_read_.fetch_add(size, std::memory_order_relaxed);
  return absl::OkStatus();
}

absl::StatusOr<LocalTensor> SafetensorsFile::Read(absl::string_view name) {
  const SafetensorsEntry* e = Find(name);
  if (e == nullptr) {
    return absl::NotFoundError(absl::StrCat(QuotedPath(path_), ": no tensor ", QuotedInput(name)));
  }
  for (int64_t d : e->shape) {
    // Zero-size tensors are valid in the format; the engine's Shape is not
    // (every extent >= 1), so they come back as empty local tensors.
    if (d == 0) {
      if (!e->data_type) break;
      return LocalTensor::Empty(*e->data_type, e->shape);
    }
  }
  OFS_ASSIGN_OR_RETURN(Shape shape, Shape::Make(e->shape));
  return ReadRegion(name, TensorSlice(shape));
}

absl::StatusOr<LocalTensor> SafetensorsFile::ReadRegion(absl::string_view name,
                                                        const TensorSlice& region) {
  const SafetensorsEntry* e = Find(name);
  if (e == nullptr) {
    return absl::NotFoundError(absl::StrCat(QuotedPath(path_), ": no tensor ", QuotedInput(name)));
  }
  if (!e->data_type) {
    return absl::UnimplementedError(absl::StrCat(QuotedPath(path_), ": tensor ", QuotedInput(e->name),
                                                 " is ", e->dtype,
                                                 ", which the engine has no dtype for"));
  }
  const int rank = static_cast<int>(e->shape.size());
  if (region.rank() != rank) {
    return absl::InvalidArgumentError(absl::StrCat(QuotedPath(path_), ": tensor ",
                                                   QuotedInput(e->name), " has ", rank,
                                                   " dims; region ", region.ToString()));
  }
  std::vector<int64_t> dims(rank);
  for (int d = 0; d < rank; ++d) {
    const IndexRange r = region.range(d);
    if (r.begin < 0 || r.end > e->shape[d] || r.end < r.begin) {
      return absl::InvalidArgumentError(absl::StrCat(QuotedPath(path_), ": tensor ",
                                                     QuotedInput(e->name), ": region ",
                                                     region.ToString(), " is outside its shape"));
    }
    dims[d] = r.size();
  }
  OFS_ASSIGN_OR_RETURN(LocalTensor out, LocalTensor::Empty(*e->data_type, dims));
  if (out.elem_cnt() == 0) return out;
  // Row-major: the trailing dims the region covers whole merge into one
  // block; the dim before them may be partial; each run is its range
  // times that block, contiguous in the file.
  int split = rank;  // dims [split, rank) are whole
  while (split > 0 && region.range(split - 1).begin == 0 &&
         region.range(split - 1).end == e->shape[split - 1]) {
    --split;
  }
  int64_t block = 1;
  for (int d = split; d < rank; ++d) block *= e->shape[d];
  const int run_dim = split - 1;  // -1: the whole tensor is one run
  const int64_t run_elems = run_dim < 0 ? block : region.range(run_dim).size() * block;
  std::vector<int64_t> strides(rank, 1);
  for (int d = rank - 2; d >= 0; --d) strides[d] = strides[d + 1] * e->shape[d + 1];
  std::vector<int64_t> idx(std::max(run_dim, 0), 0);  // position over dims [0, run_dim)
  for (int d = 0; d < run_dim; ++d) idx[d] = region.range(d).begin;
  char* dst = static_cast<char*>(out.raw_data());
  while (true) {
    int64_t elem = run_dim < 0 ? 0 : region.range(run_dim).begin * strides[run_dim];
    for (int d = 0; d < run_dim; ++d) elem += idx[d] * strides[d];
    const int64_t bytes = run_elems * e->itemsize;
    absl::Status s = PreadExactly(e->begin + elem * e->itemsize, bytes, dst, e->name);
    OFS_RETURN_IF_ERROR(s);
    dst += bytes;
    int d = run_dim - 1;
    for (; d >= 0; --d) {
      if (++idx[d] < region.range(d).end) break;
      idx[d] = region.range(d).begin;
    }
    if (d < 0) break;
  }
  return out;
}

absl::Status WriteFileAtomically(const std::string& path, absl::string_view contents) {
  const absl::string_view pieces[] = {contents};
  return CommitPieces(path, pieces);
}

absl::Status WriteSafetensors(const std::string& path,
                              absl::Span<const std::pair<std::string, LocalTensor>> tensors,
                              const std::map<std::string, std::string>& metadata) {
  std::string json = "{";
  if (!metadata.empty()) {
    json += "\"__metadata__\":{";
    bool first = true;
    for (const auto& [k, v] : metadata) {
      absl::StrAppend(&json, first ? "" : ",", io::JsonString(k), ":", io::JsonString(v));
      first = false;
    }
    json += "}";
  }
  int64_t offset = 0;
  std::vector<int64_t> begins;
  for (size_t i = 0; i < tensors.size(); ++i) {
    const auto& [name, t] = tensors[i];
    if (name == "__metadata__" || name.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat(QuotedPath(path), ": tensor name ", QuotedInput(name), " is reserved"));
    }
    for (size_t j = 0; j < i; ++j) {
      if (tensors[j].first == name) {
        return absl::InvalidArgumentError(
            absl::StrCat(QuotedPath(path), ": tensor ", QuotedInput(name), " given twice"));
      }
    }
    if (!t.defined() || t.device() != DeviceType::kCpu) {
      return absl::InvalidArgumentError(
          absl::StrCat(QuotedPath(path), ": tensor ", QuotedInput(name),
                       " must be a defined host tensor"));
    }
    offset = (offset + 7) / 8 * 8;
    begins.push_back(offset);
    std::string shape;
    for (int d = 0; d < t.rank(); ++d) absl::StrAppend(&shape, d ? "," : "", t.dim(d));
    absl::StrAppend(&json, json.size() > 1 ? "," : "", io::JsonString(name), ":{\"dtype\":\"",
                    SafetensorsDtypeName(t.dtype()), "\",\"shape\":[", shape,
                    "],\"data_offsets\":[", offset, ",", offset + t.byte_size(), "]}");
    offset += t.byte_size();
  }
  json += "}";
  // Pad so the data region starts 8-byte aligned, as the reference writer does.
  json.append((8 - json.size() % 8) % 8, ' ');
  std::string head(8, '\0');
  uint64_t n = json.size();
  for (int i = 0; i < 8; ++i) head[i] = static_cast<char>((n >> (8 * i)) & 0xff);
  std::vector<absl::string_view> pieces = {head, json};
  static const char kZeros[8] = {};
  int64_t at = 0;
  for (size_t i = 0; i < tensors.size(); ++i) {
    if (begins[i] > at) pieces.emplace_back(kZeros, begins[i] - at);
    const LocalTensor& t = tensors[i].second;
    pieces.emplace_back(static_cast<const char*>(t.raw_data()), t.byte_size());
    at = begins[i] + t.byte_size();
  }
  return CommitPieces(path, pieces);
}

}  // namespace oneflow_sbp::checkpoint