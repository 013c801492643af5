// Early-return helpers for absl::Status / absl::StatusOr.
//
//   OFS_RETURN_IF_ERROR(ValidateShape(shape));
//   OFS_ASSIGN_OR_RETURN(NdSbp nd_sbp, NdSbp::Parse(text));
//
// Both evaluate their argument once and return the error unchanged, so the
// message written at the failure site (naming op, blob and value) reaches the
// user as is.
#ifndef ONEFLOW_SBP_VALUES_STATUS_MACROS_H_
#define ONEFLOW_SBP_VALUES_STATUS_MACROS_H_

#include "absl/status/status.h"
#include "absl/status/statusor.h"

#define OFS_RETURN_IF_ERROR(expr)                 \
  do {                                            \
    ::absl::Status ofs_status_ = (expr);          \
    if (!ofs_status_.ok()) return ofs_status_;    \
  } while (0)

#define OFS_STATUS_CONCAT_INNER_(a, b) a##b
#define OFS_STATUS_CONCAT_(a, b) OFS_STATUS_CONCAT_INNER_(a, b)

#define OFS_ASSIGN_OR_RETURN(lhs, expr) \
  OFS_ASSIGN_OR_RETURN_IMPL_(OFS_STATUS_CONCAT_(ofs_statusor_, __LINE__), lhs, expr)

#define OFS_ASSIGN_OR_RETURN_IMPL_(statusor, lhs, expr) \
  auto statusor = (expr);                               \
  if (!statusor.ok()) return statusor.status();         \
  lhs = std::move(statusor).value()

#endif  // ONEFLOW_SBP_VALUES_STATUS_MACROS_H_
