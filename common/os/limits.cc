#include "common/os/limits.h"

#include <dirent.h>
#include <sys/resource.h>

#include <string>

#include "absl/strings/str_cat.h"

namespace tempest::os {

size_t FreeDescriptors() {
  rlimit limit{};
  if (::getrlimit(RLIMIT_NOFILE, &limit) != 0) return 0;
  DIR* dir = ::opendir("/proc/self/fd");
  if (dir == nullptr) return 0;
  size_t open = 0;
  while (const dirent* entry = ::readdir(dir)) {
    if (entry->d_name[0] != '.') ++open;
  }
  ::closedir(dir);
  // The directory's own descriptor was counted and is closed again.
  if (open > 0) --open;
  const rlim_t soft = limit.rlim_cur;
  if (soft == RLIM_INFINITY) return static_cast<size_t>(-1) / 2;
  return soft > open ? static_cast<size_t>(soft - open) : 0;
}

absl::Status ThreadStartError(std::string_view what, const std::system_error& e) {
  return absl::ResourceExhaustedError(
      absl::StrCat("cannot start a thread for ", std::string(what), ": ", e.what(),
                   " (the account's or the host's thread limit: RLIMIT_NPROC, "
                   "kernel.threads-max, or memory)"));
}

}  // namespace tempest::os
