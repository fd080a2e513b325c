#ifndef TEMPEST_COMMON_OS_LIMITS_H_
#define TEMPEST_COMMON_OS_LIMITS_H_

#include <cstddef>
#include <string_view>
#include <system_error>
#include <thread>
#include <utility>

#include "absl/status/status.h"

namespace tempest::os {

// Descriptors this process may still open: the soft RLIMIT_NOFILE minus the
// descriptors open now (counted in /proc/self/fd). 0 when even the directory
// cannot be opened, which means none are left.
size_t FreeDescriptors();

// One clear error for a thread that could not be started: the host's or
// the account's thread limit (RLIMIT_NPROC, kernel.threads-max) or memory.
absl::Status ThreadStartError(std::string_view what, const std::system_error& e);

// std::thread's constructor reports a failed start by throwing
// std::system_error; left alone that ends the process with SIGABRT. This is
// the one place that exception is turned into a Status: every thread whose
// number user input can raise (executors, spout helpers, event loops) is
// started here. On error `out` is left unchanged and the callable, with its
// arguments, has been destroyed.
template <typename... Args>
absl::Status StartThread(std::thread& out, std::string_view what, Args&&... args) {
  try {
    out = std::thread(std::forward<Args>(args)...);
  } catch (const std::system_error& e) {
    return ThreadStartError(what, e);
  }
  return absl::OkStatus();
}

}  // namespace tempest::os

#endif  // TEMPEST_COMMON_OS_LIMITS_H_
