#include "comm/job_auth.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>

#include "absl/strings/escaping.h"
#include "oneflow_sbp/values/status_macros.h"

namespace oneflow_sbp::comm {

absl::StatusOr<std::string> RandomBytes(size_t bytes) {
  std::string out(bytes, '\0');
  if (bytes > 0 &&
      RAND_bytes(reinterpret_cast<unsigned char*>(out.data()), static_cast<int>(bytes)) != 1) {
    return absl::InternalError("the system's random generator failed (RAND_bytes)");
  }
  return out;
}

absl::StatusOr<std::string> NewJobSecret() {
  OFS_ASSIGN_OR_RETURN(std::string raw, RandomBytes(32));
  return absl::BytesToHexString(raw);
}

std::string Hmac(absl::string_view key, absl::string_view message) {
  unsigned char tag[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()),
       reinterpret_cast<const unsigned char*>(message.data()), message.size(), tag, &length);
  return std::string(reinterpret_cast<const char*>(tag), length);
}

bool TagsEqual(absl::string_view a, absl::string_view b) {
  return a.size() == b.size() && CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

}  // namespace oneflow_sbp::comm
