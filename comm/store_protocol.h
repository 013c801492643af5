// The rendezvous store's wire protocol (kv_store.h), as pure functions: the
// handshake that proves both sides hold the job secret, and the framing and
// decoding of requests. The decoder is what untrusted bytes reach first, so
// it is kept here, free of sockets, for the fuzzer (fuzz/store_fuzzer.cc).
//
// All integers little-endian (the machines' own order; both are x86-64 or
// aarch64 hosts of one job).
//
//   greeting  server -> client   u8 0, 8-byte magic "OFSKV\x01\0\0", 16-byte server nonce
//             (or the single byte 14 = busy: too many connections, retry)
//   hello     client -> server   16-byte client nonce, u32 rank,
//                                HelloTag = HMAC(secret, "ofs-store-hello" sn cn rank)
//   welcome   server -> client   u8 0 then WelcomeTag = HMAC(secret, "ofs-store-welcome" sn cn rank)
//             or u8 code, u32 length, message (refused: wrong secret, rank taken)
//   request   client -> server   u32 length, body, RequestTag = HMAC(secret, "ofs-store-request"
//                                sn cn seq body), seq = 0, 1, 2, ... per connection
//     body = u8 op, u32 n, n x (u32 length, bytes), i64 timeout_ms
//   response  server -> client   u8 status code, u32 length, bytes (value or error message)
//
// The secret never crosses the wire; nonces make every tag fresh, and the
// sequence number keeps a recorded request from being replayed. Responses
// carry no tag: the welcome tag proved the server, and the connection is TCP.
#ifndef COMM_STORE_PROTOCOL_H_
#define COMM_STORE_PROTOCOL_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace oneflow_sbp::comm::store {

enum class Op : uint8_t { kSet = 1, kGet = 2, kWait = 3, kBeat = 4 };

// A request body is at most this long; a store value therefore too.
inline constexpr uint32_t kMaxRequestBytes = 1u << 20;
// Responses are a value or a short message.
inline constexpr uint32_t kMaxResponseBytes = kMaxRequestBytes;
inline constexpr char kMagic[8] = {'O', 'F', 'S', 'K', 'V', '\x01', '\0', '\0'};
inline constexpr size_t kGreetingBytes = 1 + 8 + 16;
inline constexpr size_t kHelloBytes = 16 + 4 + 32;
inline constexpr uint8_t kBusy = 14;  // absl::StatusCode::kUnavailable

// What both sides of one authenticated connection know.
struct Session {
  std::string secret;
  std::string server_nonce;  // 16 bytes
  std::string client_nonce;  // 16 bytes
  uint32_t rank = 0;
};

std::string HelloTag(const Session& s);
std::string WelcomeTag(const Session& s);

struct Request {
  Op op = Op::kGet;
  std::vector<std::string> args;
  int64_t timeout_ms = 0;

  bool operator==(const Request& o) const {
    return op == o.op && args == o.args && timeout_ms == o.timeout_ms;
  }
};

// The body of a request (no length, no tag).
std::string EncodeBody(const Request& r);

// Decodes a body: every byte accounted for, argument lengths within the
// body, the argument count right for the op (set 2, get 1, wait >= 1, beat
// 0). kInvalidArgument saying what is wrong; never allocates more than the
// body's own size.
absl::StatusOr<Request> DecodeBody(absl::string_view body);

// A whole request frame for connection `s`, request number `seq`.
std::string SealRequest(const Session& s, uint64_t seq, absl::string_view body);

// Checks a frame's announced length before anything is allocated for it:
// kInvalidArgument above kMaxRequestBytes.
absl::Status CheckRequestLength(uint32_t length);

// Opens a whole frame (u32 length, body, tag): the length must match the
// frame, the tag must be request `seq`'s on `s` (else kPermissionDenied),
// then DecodeBody.
absl::StatusOr<Request> OpenRequest(const Session& s, uint64_t seq, absl::string_view frame);

void PutU32(std::string& out, uint32_t v);
uint32_t GetU32(const char* p);

}  // namespace oneflow_sbp::comm::store

#endif  // COMM_STORE_PROTOCOL_H_
