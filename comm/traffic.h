// Traffic: bytes a rank sent and received, as counted by the collectives
// themselves (payload bytes of completed messages; local copies between a
// rank's own buffers are not traffic).
//
// Example:
//   Traffic t;
//   CallOptions options;
//   options.traffic = &t;
//   comm.AllReduce(in, out, 1000, DataType::kFloat32, options);
//   t.bytes_sent;   // (T - p_k) + (T - p_{k+1}), see communicator.h
#ifndef COMM_TRAFFIC_H_
#define COMM_TRAFFIC_H_

#include <cstdint>
#include <string>

#include "absl/strings/str_cat.h"

namespace oneflow_sbp::comm {

struct Traffic {
  int64_t bytes_sent = 0;
  int64_t bytes_received = 0;

  Traffic& operator+=(const Traffic& o) {
    bytes_sent += o.bytes_sent;
    bytes_received += o.bytes_received;
    return *this;
  }
  friend bool operator==(const Traffic& a, const Traffic& b) {
    return a.bytes_sent == b.bytes_sent && a.bytes_received == b.bytes_received;
  }
  friend bool operator!=(const Traffic& a, const Traffic& b) { return !(a == b); }
  // "sent 48 B, received 96 B".
  std::string ToString() const {
    return absl::StrCat("sent ", bytes_sent, " B, received ", bytes_received, " B");
  }
};

}  // namespace oneflow_sbp::comm

#endif  // COMM_TRAFFIC_H_
