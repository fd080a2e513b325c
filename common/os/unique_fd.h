#ifndef TEMPEST_COMMON_OS_UNIQUE_FD_H_
#define TEMPEST_COMMON_OS_UNIQUE_FD_H_

// The one owner of a file descriptor: whoever holds the UniqueFd closes it,
// on every path out, so no early return leaks one and nothing closes one
// twice. Not thread-safe (like the int it wraps): one owner at a time.

#include <fcntl.h>

#include "absl/status/statusor.h"

namespace tempest::os {

// An open file descriptor that closes itself. Move-only.
class UniqueFd {
 public:
  UniqueFd() = default;
  explicit UniqueFd(int fd) : fd_(fd) {}
  UniqueFd(UniqueFd&& other) noexcept : fd_(other.Release()) {}
  UniqueFd& operator=(UniqueFd&& other) noexcept;
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;
  ~UniqueFd() { Reset(); }

  int get() const { return fd_; }
  bool valid() const { return fd_ >= 0; }
  // Hands the descriptor to the caller, who closes it; this holds none.
  int Release();
  // Closes the descriptor held (if any) and holds `fd` instead.
  void Reset(int fd = -1);
  // Closes the descriptor held now and reports close(2)'s result (0, or -1
  // with errno set): for a file just written, a failed close is a failed
  // write.
  int Close();

 private:
  int fd_ = -1;
};

// Both ends of a pipe.
struct Pipe {
  UniqueFd read;
  UniqueFd write;
};

// pipe2(2) with `flags`. Internal "pipe2: <strerror>" when it fails.
absl::StatusOr<Pipe> MakePipe(int flags = O_CLOEXEC);

}  // namespace tempest::os

#endif  // TEMPEST_COMMON_OS_UNIQUE_FD_H_
