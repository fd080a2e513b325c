#ifndef TEMPEST_COMMON_API_STATUS_MACROS_H_
#define TEMPEST_COMMON_API_STATUS_MACROS_H_

// Early-return macros for absl::Status / absl::StatusOr, so a sequence of
// fallible steps reads as the steps rather than as a test and a return of
// each step's status. Header-only, Abseil only: they live in the lowest
// module so that every module, this one included, passes a Status up the
// same way.
//
//   TEMPEST_RETURN_IF_ERROR(file.Open(path));
//   TEMPEST_ASSIGN_OR_RETURN(TopologyDef def, loader.LoadFile(path));
//   TEMPEST_ASSIGN_OR_RETURN(existing_variable, ParseHostPort(text));
//
// Only the TEMPEST_ names are defined here: user components include this
// module's headers, and a short name could clash with their own macros.
// common/core/status_macros.h adds the short aliases RETURN_IF_ERROR /
// ASSIGN_OR_RETURN that Tempest's own code uses.
//
// The enclosing function may return absl::Status or any absl::StatusOr<T>:
// both convert from a non-OK absl::Status.

#include <utility>

#include "absl/base/optimization.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace tempest::api::status_macros_internal {

// Lets TEMPEST_RETURN_IF_ERROR take a Status or a StatusOr<T> expression.
inline const absl::Status& ToStatus(const absl::Status& status) { return status; }
inline absl::Status&& ToStatus(absl::Status&& status) { return std::move(status); }
template <typename T>
const absl::Status& ToStatus(const absl::StatusOr<T>& status_or) {
  return status_or.status();
}
template <typename T>
absl::Status ToStatus(absl::StatusOr<T>&& status_or) {
  return std::move(status_or).status();
}

}  // namespace tempest::api::status_macros_internal

#define TEMPEST_STATUS_MACROS_CONCAT_INNER_(a, b) a##b
#define TEMPEST_STATUS_MACROS_CONCAT_(a, b) TEMPEST_STATUS_MACROS_CONCAT_INNER_(a, b)

// Evaluates `expr` (an absl::Status or absl::StatusOr<T>) once; if it is not
// OK, returns its status from the enclosing function.
#define TEMPEST_RETURN_IF_ERROR(expr)                                                  \
  do {                                                                                 \
    absl::Status tempest_status_macros_status_ =                                       \
        ::tempest::api::status_macros_internal::ToStatus(expr);                        \
    if (ABSL_PREDICT_FALSE(!tempest_status_macros_status_.ok())) {                     \
      return tempest_status_macros_status_;                                            \
    }                                                                                  \
  } while (false)

// Evaluates `rexpr` (an absl::StatusOr<T>) once; if it is not OK, returns its
// status from the enclosing function, otherwise moves its value into `lhs`,
// a declaration (`auto x`, `Foo x`) or an existing variable. It expands to
// several statements, so it cannot be the body of an unbraced `if`, and a
// declared `lhs` lives in the enclosing scope. Structured bindings are not
// supported (the comma would split the macro arguments).
#define TEMPEST_ASSIGN_OR_RETURN(lhs, rexpr)                                             \
  TEMPEST_ASSIGN_OR_RETURN_IMPL_(                                                        \
      TEMPEST_STATUS_MACROS_CONCAT_(tempest_status_macros_statusor_, __LINE__), lhs, rexpr)

#define TEMPEST_ASSIGN_OR_RETURN_IMPL_(statusor, lhs, rexpr) \
  auto statusor = (rexpr);                                   \
  if (ABSL_PREDICT_FALSE(!statusor.ok())) {                  \
    return std::move(statusor).status();                     \
  }                                                          \
  lhs = std::move(statusor).value()

#endif  // TEMPEST_COMMON_API_STATUS_MACROS_H_
