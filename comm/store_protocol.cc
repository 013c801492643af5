#include "comm/store_protocol.h"

#include <cstring>

#include "absl/strings/str_cat.h"
#include "comm/job_auth.h"

namespace oneflow_sbp::comm::store {
namespace {

std::string Transcript(absl::string_view label, const Session& s) {
  std::string m(label);
  m += s.server_nonce;
  m += s.client_nonce;
  PutU32(m, s.rank);
  return m;
}

}  // namespace

void PutU32(std::string& out, uint32_t v) { out.append(reinterpret_cast<const char*>(&v), 4); }

uint32_t GetU32(const char* p) {
  uint32_t v = 0;
  std::memcpy(&v, p, 4);
  return v;
}

std::string HelloTag(const Session& s) {
  return Hmac(s.secret, Transcript("ofs-store-hello", s));
}

std::string WelcomeTag(const Session& s) {
  return Hmac(s.secret, Transcript("ofs-store-welcome", s));
}

std::string EncodeBody(const Request& r) {
  std::string out(1, static_cast<char>(r.op));
  PutU32(out, static_cast<uint32_t>(r.args.size()));
  for (const std::string& a : r.args) {
    PutU32(out, static_cast<uint32_t>(a.size()));
    out += a;
  }
  out.append(reinterpret_cast<const char*>(&r.timeout_ms), 8);
  return out;
}

absl::StatusOr<Request> DecodeBody(absl::string_view body) {
  auto bad = [](absl::string_view why) {
    return absl::InvalidArgumentError(absl::StrCat("bad store request: ", why));
  };
  if (body.size() > kMaxRequestBytes) return bad("too long");
  if (body.size() < 1 + 4 + 8) return bad(absl::StrCat("only ", body.size(), " bytes"));
  Request r;
  const uint8_t op = static_cast<uint8_t>(body[0]);
  if (op < 1 || op > 4) return bad(absl::StrCat("unknown op ", op));
  r.op = static_cast<Op>(op);
  const uint32_t n = GetU32(body.data() + 1);
  size_t at = 5;
  const size_t end = body.size() - 8;  // the timeout
  // Each argument takes at least its 4-byte length: bound the count first.
  if (n > (end - at) / 4) return bad(absl::StrCat(n, " arguments in ", body.size(), " bytes"));
  r.args.reserve(n);
  for (uint32_t i = 0; i < n; ++i) {
    if (end - at < 4) return bad("argument length past the end");
    const uint32_t len = GetU32(body.data() + at);
    at += 4;
    if (len > end - at) return bad(absl::StrCat("argument of ", len, " bytes past the end"));
    r.args.emplace_back(body.substr(at, len));
    at += len;
  }
  if (at != end) return bad(absl::StrCat(end - at, " stray bytes"));
  std::memcpy(&r.timeout_ms, body.data() + end, 8);
  const size_t want = r.op == Op::kSet ? 2 : r.op == Op::kGet ? 1 : r.op == Op::kBeat ? 0 : n;
  if (n != want || (r.op == Op::kWait && n == 0)) {
    return bad(absl::StrCat("op ", op, " with ", n, " arguments"));
  }
  return r;
}

std::string SealRequest(const Session& s, uint64_t seq, absl::string_view body) {
  std::string frame;
  PutU32(frame, static_cast<uint32_t>(body.size()));
  frame.append(body.data(), body.size());
  std::string m = Transcript("ofs-store-request", s);
  m.append(reinterpret_cast<const char*>(&seq), 8);
  m.append(body.data(), body.size());
  frame += Hmac(s.secret, m);
  return frame;
}

absl::Status CheckRequestLength(uint32_t length) {
  if (length > kMaxRequestBytes) {
    return absl::InvalidArgumentError(absl::StrCat("store request of ", length,
                                                   " bytes is over the limit of ",
                                                   kMaxRequestBytes));
  }
  return absl::OkStatus();
}

absl::StatusOr<Request> OpenRequest(const Session& s, uint64_t seq, absl::string_view frame) {
  if (frame.size() < 4 + kTagBytes) return absl::InvalidArgumentError("short store request");
  const uint32_t length = GetU32(frame.data());
  if (absl::Status st = CheckRequestLength(length); !st.ok()) return st;
  if (frame.size() != 4 + size_t{length} + kTagBytes) {
    return absl::InvalidArgumentError(absl::StrCat("store request frame of ", frame.size(),
                                                   " bytes announces ", length));
  }
  const absl::string_view body = frame.substr(4, length);
  std::string m = Transcript("ofs-store-request", s);
  m.append(reinterpret_cast<const char*>(&seq), 8);
  m.append(body.data(), body.size());
  if (!TagsEqual(Hmac(s.secret, m), frame.substr(4 + length))) {
    return absl::PermissionDeniedError("store request with a bad tag (not this job's secret)");
  }
  return DecodeBody(body);
}

}  // namespace oneflow_sbp::comm::store
