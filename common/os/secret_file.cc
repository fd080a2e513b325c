#include "common/os/secret_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "common/os/files.h"
#include "common/os/unique_fd.h"

namespace tempest::os {
namespace {

// Debian's Abseil has its own string_view type (common/api's Sv, which this
// module may not include).
absl::string_view Sv(std::string_view s) { return absl::string_view(s.data(), s.size()); }
std::string_view StdSv(absl::string_view s) { return std::string_view(s.data(), s.size()); }

}  // namespace

absl::StatusOr<LoadedSecret> LoadSecretFile(const std::string& path, std::string_view key,
                                            const SecretKind& kind) {
  auto fail = [&](std::string_view why) {
    return absl::InvalidArgumentError(absl::StrCat(Sv(key), " ", path, ": ", Sv(why)));
  };
  const UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd.valid()) return fail(std::strerror(errno));
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode)) return fail("not a regular file");
  absl::StatusOr<std::string> text = ReadSmallFd(fd.get(), path, kMaxSecretFileBytes);
  if (absl::IsOutOfRange(text.status())) {
    return fail(absl::StrCat("larger than 4 KiB; it should hold one ", Sv(kind.noun)));
  }
  if (!text.ok()) return fail(StdSv(text.status().message()));
  std::string_view value = StdSv(absl::StripAsciiWhitespace(*text));
  if (const size_t nl = value.find('\n'); nl != std::string_view::npos) {
    value = StdSv(absl::StripAsciiWhitespace(Sv(value.substr(0, nl))));
  }
  if (value.empty()) return fail(absl::StrCat("is empty; it should hold one ", Sv(kind.noun)));
  for (const char c : value) {
    if (std::iscntrl(static_cast<unsigned char>(c)) || c == ' ') {
      return fail(absl::StrCat("the ", Sv(kind.noun), " holds a space or a control character"));
    }
  }
  LoadedSecret loaded{std::string(value), std::nullopt};
  if ((st.st_mode & (S_IRWXG | S_IRWXO)) != 0) {
    char mode[8];
    std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(st.st_mode & 07777));
    loaded.warning = absl::StrCat(Sv(key), " ", path, " has mode ", mode, ": other users can read ",
                                  Sv(kind.what), "; chmod 600 it");
  }
  return loaded;
}

absl::Status WriteSecretFile(const std::string& path, std::string_view value,
                             std::string_view label) {
  UniqueFd fd(::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600));
  if (!fd.valid()) {
    return absl::FailedPreconditionError(
        absl::StrCat("cannot write ", Sv(label), " ", path, ": ", std::strerror(errno)));
  }
  const std::string text = absl::StrCat(Sv(value), "\n");
  bool ok = ::fchmod(fd.get(), 0600) == 0;
  size_t written = 0;
  while (ok && written < text.size()) {
    const ssize_t n = ::write(fd.get(), text.data() + written, text.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      ok = false;
    } else {
      written += static_cast<size_t>(n);
    }
  }
  ok = (fd.Close() == 0) && ok;
  if (!ok) {
    return absl::FailedPreconditionError(
        absl::StrCat("cannot write ", Sv(label), " ", path, ": ", std::strerror(errno)));
  }
  return absl::OkStatus();
}

}  // namespace tempest::os
