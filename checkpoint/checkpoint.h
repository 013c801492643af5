// Distributed checkpoints: named global tensors saved as safetensors shard
// files plus an index, loaded back into any placement and any layout.
//
//   // every rank of the world:
//   absl::Status s = SaveCheckpoint(ctx, "/ckpt/run1", {{"w", w}, {"adam.m.w", m}},
//                                   {{"step", "3"}});
//   absl::StatusOr<std::vector<GlobalTensor>> t = LoadCheckpoint(
//       ctx, "/ckpt/run1", {{"w", placement_4, *NdSbp::Parse("S(1)")}});
//
// Format (docs/CHECKPOINTS.md): DIR/index.json lists every tensor's dtype,
// shape, saved layout and placement, and its pieces: which file, which key
// in it, which region of the logical tensor, and a CRC-32C of the piece's
// bytes. A piece is one distinct rank slice: a region held by several
// ranks (broadcast axes) is written once, by the lowest rank holding it;
// partial sums are reduced first. Rank r writes its pieces to
// DIR/v<version>-rank<r>.safetensors.
//
// Atomicity: index.json is the commit point. Shard files of a new version
// have new names and are fsynced before world rank 0 writes the index
// beside it and renames it over index.json; files of older versions are
// deleted only after that. A process killed at any moment leaves the
// previous index and every file it names intact: the directory holds the
// old checkpoint or the new one, never a mix.
//
// Loading: each rank reads only the pieces that overlap its slice of each
// target (whole pieces, so every checksum is verified), copies the
// overlaps in, and the ranks agree before returning: every rank returns
// the tensors, or every rank returns an error (the failing rank's names
// the file and the tensor). Nothing is half loaded: the result is new
// tensors, never writes into existing ones. A plain .safetensors file is
// a checkpoint source too (one piece per tensor, laid out broadcast;
// ranks read only their slice's bytes, there is no checksum).
//
// Save and Load are collective over ctx.world(): every rank of the world
// calls them with the same arguments. Ranks of several processes need a
// shared filesystem for DIR.
#ifndef CHECKPOINT_CHECKPOINT_H_
#define CHECKPOINT_CHECKPOINT_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "eager/eager_context.h"
#include "eager/global_tensor.h"
#include "oneflow_sbp/values/nd_sbp.h"
#include "oneflow_sbp/values/placement.h"
#include "oneflow_sbp/values/tensor_desc.h"
#include "oneflow_sbp/values/tensor_slice_view.h"

namespace oneflow_sbp::checkpoint {

struct NamedTensor {
  std::string name;
  eager::GlobalTensor tensor;
};

struct CheckpointPiece {
  std::string file;  // relative to the checkpoint directory
  std::string key;   // the tensor name inside that file
  TensorSlice region;
  int64_t bytes = 0;
  std::optional<uint32_t> crc32c;  // absent for a plain safetensors source
};

struct CheckpointTensor {
  std::string name;
  TensorDesc desc;
  std::string nd_sbp;     // the layout it was saved from ("(S(0), B)")
  std::string placement;  // "cpu:0-3 [2,2]"
  std::vector<CheckpointPiece> pieces;
};

struct CheckpointIndex {
  // The directory (or the .safetensors file) it was read from.
  std::string source;
  int64_t version = 0;
  std::map<std::string, std::string> metadata;
  std::vector<CheckpointTensor> tensors;  // sorted by name
  const CheckpointTensor* Find(const std::string& name) const;
};

// Every world rank calls it. kInvalidArgument for duplicate or empty
// names or tensors of different placements' worlds; I/O errors name the
// file. Returns once the new index is committed on every rank. A failure
// on any rank (arguments, a partial-sum reduction, a slice, a device copy,
// a write) is agreed before the next collective: every rank returns an
// error promptly (the others kAborted, "another rank failed"), nothing is
// committed, and the previous checkpoint stays as it was.
absl::Status SaveCheckpoint(eager::EagerContext& ctx, const std::string& dir,
                            absl::Span<const NamedTensor> tensors,
                            const std::map<std::string, std::string>& metadata = {});

struct CheckpointTarget {
  std::string name;
  Placement placement;
  NdSbp nd_sbp;
  // If set, the saved tensor must have this desc (else kInvalidArgument
  // naming the tensor and both descs).
  std::optional<TensorDesc> expect;
};

struct LoadStats {
  int64_t bytes_read = 0;   // payload bytes this rank read
  int64_t pieces_read = 0;  // pieces (or plain-file regions) it read
};

// Every world rank calls it; see the header comment. kNotFound for a
// missing checkpoint or tensor; kDataLoss for a truncated piece or a
// checksum mismatch; kInvalidArgument for a desc mismatch or a layout that
// does not fit; "another rank failed" (same code) on the other ranks.
absl::StatusOr<std::vector<eager::GlobalTensor>> LoadCheckpoint(
    eager::EagerContext& ctx, const std::string& source, absl::Span<const CheckpointTarget> targets,
    LoadStats* stats = nullptr);

// The index of a checkpoint directory, or the one-piece-per-tensor index
// of a plain .safetensors file. kNotFound if neither exists.
absl::StatusOr<CheckpointIndex> ReadCheckpointIndex(const std::string& source);

// One consolidated .safetensors file with every tensor whole (checksums
// verified), loadable by any safetensors reader; the checkpoint's metadata
// goes into __metadata__. Runs in one process, no ranks.
absl::Status ExportCheckpoint(const std::string& source, const std::string& out_file);

// `sbp ckpt inspect`: tensors, layouts, pieces and sizes, as text.
std::string CheckpointIndexToText(const CheckpointIndex& index);

}  // namespace oneflow_sbp::checkpoint
#endif  // CHECKPOINT_CHECKPOINT_H_
