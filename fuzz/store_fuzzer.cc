// Fuzz target: the rendezvous store's request decoder
// (comm/store_protocol.h), the first code that bytes from a
// connection reach.
//
// Input: the first byte picks the mode, the rest is bytes off the wire.
//   even: the rest is a whole request frame (u32 length, body, tag) for a
//         fixed session, opened as request number (byte >> 1) % 4: what a
//         stranger without the secret can send. Its tag cannot be right.
//   odd:  the rest is a request body, sealed with the right tag first, so
//         the decoder proper is reached: what a rank of the job sends.
// Seeds: every op's well-formed body, wrong counts, lengths past the end,
// stray bytes, a frame with a good tag, one replayed, one too long.
// Properties: no crash, no hang, no allocation beyond the input's size;
// errors are never kInternal; a frame without the right tag is never
// accepted; a sealed body opens exactly when DecodeBody accepts it, to the
// same request, which encodes back to the same bytes; the same frame is
// refused as any other request number (no replay) and with a flipped bit.
#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/strings/str_cat.h"
#include "fuzz/fuzz_check.h"
#include "fuzz/fuzz_input.h"
#include "comm/store_protocol.h"

namespace oneflow_sbp::fuzz {
namespace {

namespace store = ::oneflow_sbp::comm::store;

const store::Session& FuzzSession() {
  static const store::Session* s = [] {
    auto* session = new store::Session;
    session->secret = "fuzz-secret";
    session->server_nonce = std::string(16, 's');
    session->client_nonce = std::string(16, 'c');
    session->rank = 1;
    return session;
  }();
  return *s;
}

void FuzzOne(FuzzInput& in) {
  const uint8_t mode = in.Byte();
  const std::string bytes(in.Rest());
  const store::Session& s = FuzzSession();
  if (mode % 2 == 0) {
    const uint64_t seq = (mode >> 1) % 4;
    absl::StatusOr<store::Request> r = store::OpenRequest(s, seq, bytes);
    CheckNotInternal(r.status(), "OpenRequest");
    // Only a frame sealed with the secret opens: a forged tag is a 2^-256
    // event, so an accepted frame must be exactly the sealed one.
    if (r.ok()) {
      FUZZ_CHECK(store::SealRequest(s, seq, bytes.substr(4, bytes.size() - 4 - 32)) == bytes,
                 "a frame without the right tag was accepted");
    }
    return;
  }
  absl::StatusOr<store::Request> decoded = store::DecodeBody(bytes);
  CheckNotInternal(decoded.status(), "DecodeBody");
  if (bytes.size() > store::kMaxRequestBytes) return;
  const std::string frame = store::SealRequest(s, 0, bytes);
  absl::StatusOr<store::Request> opened = store::OpenRequest(s, 0, frame);
  CheckNotInternal(opened.status(), "OpenRequest");
  FUZZ_CHECK(opened.ok() == decoded.ok(),
             absl::StrCat("sealed body opens ", opened.status().ToString(), " but decodes ",
                          decoded.status().ToString()));
  FUZZ_CHECK(store::OpenRequest(s, 1, frame).status().code() ==
                 absl::StatusCode::kPermissionDenied,
             "a frame was accepted as another request number (replay)");
  std::string flipped = frame;
  flipped[4 + (mode >> 1) % (flipped.size() - 4)] ^= 0x20;
  FUZZ_CHECK(!store::OpenRequest(s, 0, flipped).ok(), "a frame with a flipped bit was accepted");
  if (!decoded.ok()) return;
  FUZZ_CHECK(*opened == *decoded, "sealed body opens to another request");
  FUZZ_CHECK(store::EncodeBody(*decoded) == bytes, "decoded request encodes to other bytes");
  size_t arg_bytes = 0;
  for (const std::string& a : decoded->args) arg_bytes += a.size();
  FUZZ_CHECK(arg_bytes <= bytes.size(), "arguments larger than the request");
}

}  // namespace
}  // namespace oneflow_sbp::fuzz

OFS_FUZZ_TARGET(oneflow_sbp::fuzz::FuzzOne)
