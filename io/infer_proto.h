// Protobuf boundary of inference: requests from InferRequestProto (files,
// stdin, the `sbp` tool) and results to InferResultProto (dumps, JSON).
//
// Example:
//   oneflow::InferRequestProto proto;  // parsed from JSON or text format
//   absl::StatusOr<InferRequest> req = InferRequestFromProto(proto, engine.registry());
//   auto res = engine.Infer(*req);
//   oneflow::InferResultProto out = InferResultToProto(*req, **res);
#ifndef IO_INFER_PROTO_H_
#define IO_INFER_PROTO_H_

#include "absl/status/statusor.h"
#include "oneflow_sbp/inference/infer_request_spec.h"
#include "oneflow_sbp/inference/infer_types.h"
#include "oneflow_sbp/rule_api/op_def.h"
#include "oneflow_sbp/rule_api/op_registry.h"
#include "proto/infer.pb.h"
#include "proto/op_def.pb.h"
#include "proto/sbp_parallel.pb.h"

namespace oneflow_sbp::io {

// The request as its message states it (every part parsed, or kept as
// its error for BuildInferRequest to report), for a caller that changes
// parts before building it (`sbp infer --request=F` with flags).
InferRequestSpec InferRequestSpecFromProto(const oneflow::InferRequestProto& proto,
                                           const OpRegistry& registry);

// BuildInferRequest of the message's spec: a known op (kNotFound),
// attributes declared and of the right type, a placement, inputs matching
// the op's args (all named or none), input tensors given completely,
// constraints on blobs the op has, a partial_penalty_policy of 1, 2 or 3.
// The cost policy name is kept as given; the Engine rejects names it does
// not know. Messages name the op and the blob or attribute.
absl::StatusOr<InferRequest> InferRequestFromProto(const oneflow::InferRequestProto& proto,
                                                   const OpRegistry& registry);

oneflow::InferResultProto InferResultToProto(const InferRequest& request,
                                             const InferResult& result);

// OneFlow's bn -> NdSbp map for a signature of `call`.
oneflow::NdSbpSignature NdSbpSignatureToProto(const OpCall& call,
                                              const NdSbpSignature& signature);

oneflow::OpDefProto OpDefToProto(const OpDef& def);

}  // namespace oneflow_sbp::io
#endif  // IO_INFER_PROTO_H_
