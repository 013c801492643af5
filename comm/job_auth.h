// The per-job secret that every rank of one job shares, and the HMAC that
// proves knowledge of it without sending it (docs/COMM.md, "Job secret").
//
// The launcher makes a fresh secret for every job (or takes the one in its
// own environment) and hands it to its ranks in the environment variable
// OFS_JOB_SECRET, never on a command line (visible to every local user in
// /proc/PID/cmdline). A user who starts ranks by hand sets OFS_JOB_SECRET to
// the same value in every rank.
//
//   std::string secret = *NewJobSecret();          // 64 hex characters
//   std::string tag = Hmac(secret, message);        // 32 bytes
//   bool ok = TagsEqual(tag, Hmac(secret, message));
#ifndef COMM_JOB_AUTH_H_
#define COMM_JOB_AUTH_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace oneflow_sbp::comm {

// The variable that carries the job secret into rank processes.
inline constexpr char kJobSecretVariable[] = "OFS_JOB_SECRET";

// The length of an Hmac tag and of a nonce, in bytes.
inline constexpr size_t kTagBytes = 32;
inline constexpr size_t kNonceBytes = 16;

// A fresh secret: 32 random bytes from the system's generator, as 64
// lowercase hex characters. kInternal if the generator fails.
absl::StatusOr<std::string> NewJobSecret();

// `bytes` random bytes (nonces). kInternal if the generator fails.
absl::StatusOr<std::string> RandomBytes(size_t bytes);

// HMAC-SHA256 of `message` under `key`: kTagBytes raw bytes.
std::string Hmac(absl::string_view key, absl::string_view message);

// Compares two tags in time independent of where they differ.
bool TagsEqual(absl::string_view a, absl::string_view b);

}  // namespace oneflow_sbp::comm

#endif  // COMM_JOB_AUTH_H_
