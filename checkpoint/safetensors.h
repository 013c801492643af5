// safetensors: the tensor file format Hugging Face models ship in.
//
// Layout: an 8-byte little-endian header length N, N bytes of JSON, then
// the data region. The JSON maps each tensor name to {"dtype", "shape",
// "data_offsets": [begin, end]} (offsets relative to the data region) and
// may hold "__metadata__": {string: string}.
//
//   absl::StatusOr<std::unique_ptr<SafetensorsFile>> f = SafetensorsFile::Open(path);
//   const SafetensorsEntry* e = (*f)->Find("embeddings.word_embeddings.weight");
//   absl::StatusOr<LocalTensor> rows = (*f)->ReadRegion(e->name, region);  // only those bytes
//   (*f)->bytes_read();
//
// The header is validated before anything in it is trusted: its length is
// within the file and at most kMaxHeaderBytes; it is a JSON object; every
// entry has a known dtype (F64 F32 F16 BF16 I64 I32 I16 I8 U8 BOOL), a
// shape of non-negative ints, and data_offsets inside the data region,
// sized exactly shape x itemsize and overlapping no other entry. Errors
// name the file, the tensor and the field (kInvalidArgument); a file
// shorter than its header says is kDataLoss.
//
// Reads use pread on one file descriptor (thread-safe: ranks of one
// process share an open file). Writing goes to a temporary file beside
// the target, is fsynced and renamed over it, so a reader sees the old
// file or the new one, never half of one.
#ifndef CHECKPOINT_SAFETENSORS_H_
#define CHECKPOINT_SAFETENSORS_H_

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "oneflow_sbp/values/data_type.h"
#include "oneflow_sbp/storage/local_tensor.h"
#include "oneflow_sbp/values/tensor_slice_view.h"

namespace oneflow_sbp::checkpoint {

struct SafetensorsEntry {
  std::string name;
  // The file's dtype name ("F32", "I16", ...).
  std::string dtype;
  // The engine's dtype; nullopt for I16, which the engine lacks (the
  // entry is valid, reading it is kUnimplemented).
  std::optional<DataType> data_type;
  std::vector<int64_t> shape;
  // Absolute file offsets of the tensor's bytes, [begin, end).
  int64_t begin = 0;
  int64_t end = 0;
  int64_t itemsize = 0;
};

struct SafetensorsHeader {
  // In data order (ascending offsets).
  std::vector<SafetensorsEntry> entries;
  std::map<std::string, std::string> metadata;
  // Absolute offset of the data region (8 + header length).
  int64_t data_start = 0;
};

inline constexpr int64_t kMaxHeaderBytes = int64_t{100} << 20;

// Validates `json` as the header of a file `file` whose data region (after
// the header) holds `data_size` bytes starting at `data_start`. Separate
// from Open so the fuzzer can drive it without files.
absl::StatusOr<SafetensorsHeader> ParseSafetensorsHeader(absl::string_view json,
                                                         int64_t data_start, int64_t data_size,
                                                         absl::string_view file);

// "F32" for kFloat32, ...
absl::string_view SafetensorsDtypeName(DataType dtype);

class SafetensorsFile {
 public:
  // kNotFound / kPermissionDenied for a file that cannot be opened; the
  // header errors above.
  static absl::StatusOr<std::unique_ptr<SafetensorsFile>> Open(const std::string& path);
  ~SafetensorsFile();
  SafetensorsFile(const SafetensorsFile&) = delete;
  SafetensorsFile& operator=(const SafetensorsFile&) = delete;

  const std::string& path() const { return path_; }
  const SafetensorsHeader& header() const { return header_; }
  const std::vector<SafetensorsEntry>& entries() const { return header_.entries; }
  const std::map<std::string, std::string>& metadata() const { return header_.metadata; }
  // nullptr if absent.
  const SafetensorsEntry* Find(absl::string_view name) const;

  // The whole tensor.
  absl::StatusOr<LocalTensor> Read(absl::string_view name);
  // The elements of `region` (a slice of the tensor's full extent), with
  // one pread per contiguous run of the row-major layout: only those
  // bytes are read. kNotFound for an unknown name, kInvalidArgument for a
  // region outside the tensor, kUnimplemented for I16, kDataLoss if the
  // file ends early.
  absl::StatusOr<LocalTensor> ReadRegion(absl::string_view name, const TensorSlice& region);

  // Payload bytes read so far by all Read calls (not the header).
  int64_t bytes_read() const { return bytes_read_.load(std::memory_order_relaxed); }

 private:
  SafetensorsFile(std::string path, int fd, SafetensorsHeader header)
      : path_(std::move(path)), fd_(fd), header_(std::move(header)) {}
  absl::Status PreadExactly(int64_t offset, int64_t size, void* out, const std::string& tensor);

  std::string path_;
  int fd_;
  SafetensorsHeader header_;
  std::atomic<int64_t> bytes_read_{0};
};

// Writes `tensors` (names unique) and `metadata` to `path` atomically:
// a temporary file beside it, fsync, rename, fsync of the directory.
// Tensors are stored in the given order, each 8-byte aligned.
absl::Status WriteSafetensors(const std::string& path,
                              absl::Span<const std::pair<std::string, LocalTensor>> tensors,
                              const std::map<std::string, std::string>& metadata = {});

// Writes `size` bytes to `path` the same atomic way (the checkpoint index
// uses it). Exposed for callers that commit by rename.
absl::Status WriteFileAtomically(const std::string& path, absl::string_view contents);

}  // namespace oneflow_sbp::checkpoint
#endif  // CHECKPOINT_SAFETENSORS_H_
