#include "cli/dev_token.h"

#include <arpa/inet.h>
#include <signal.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "common/api/string_view_compat.h"
#include "common/os/dir_files.h"
#include "common/os/files.h"
#include "common/os/unique_fd.h"

namespace tempest::cli {
namespace {

constexpr size_t kMaxDiscoveryBytes = 4096;

// mkdir with `mode`; an existing entry is left as it is.
bool MakeDir(const std::string& path, mode_t mode) {
  return ::mkdir(path.c_str(), mode) == 0 || errno == EEXIST;
}

// A directory (not a symlink) owned by this user that nobody else may write.
bool PrivateDir(const std::string& path) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid == ::geteuid() &&
         (st.st_mode & (S_IWGRP | S_IWOTH)) == 0;
}

absl::Status Failed(const std::string& what, const std::string& path) {
  return absl::FailedPreconditionError(
      absl::StrCat("cannot ", what, " ", path, ": ", std::strerror(errno)));
}

}  // namespace

std::string DevTokenDir(std::string_view home) {
  if (home.empty()) return "";
  return (std::filesystem::path(home) / ".tempest" / "dev").string();
}

std::optional<std::string> DevTokenKey(std::string_view host, int port) {
  if (port <= 0 || port > 65535) return std::nullopt;
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  const std::string name(host);
  const std::string local = absl::StrCat("127.0.0.1:", port);
  if (absl::EqualsIgnoreCase(name, "localhost")) return local;
  unsigned char v4[4];
  if (::inet_pton(AF_INET, name.c_str(), v4) == 1) {
    if (v4[0] == 0 && v4[1] == 0 && v4[2] == 0 && v4[3] == 0) return local;  // 0.0.0.0
    if (v4[0] != 127) return std::nullopt;
    char text[INET_ADDRSTRLEN];
    if (::inet_ntop(AF_INET, v4, text, sizeof text) == nullptr) return std::nullopt;
    return absl::StrCat(text, ":", port);
  }
  unsigned char v6[16];
  if (::inet_pton(AF_INET6, name.c_str(), v6) == 1) {
    for (int i = 0; i < 15; ++i) {
      if (v6[i] != 0) return std::nullopt;
    }
    if (v6[15] == 0 || v6[15] == 1) return local;  // :: or ::1
  }
  return std::nullopt;
}

std::optional<std::string> DevTokenDiscoveryPath(const std::string& dir, std::string_view host,
                                                 int port, std::string_view suffix) {
  std::optional<std::string> key = DevTokenKey(host, port);
  if (!key.has_value() || dir.empty()) return std::nullopt;
  return (std::filesystem::path(dir) / (*key + std::string(suffix))).string();
}

absl::Status WriteDevTokenDiscovery(const std::string& dir, std::string_view host, int port,
                                    const std::string& token_file, std::string* written,
                                    std::string_view suffix) {
  std::optional<std::string> path = DevTokenDiscoveryPath(dir, host, port, suffix);
  if (!path.has_value()) {
    return absl::InvalidArgumentError(absl::StrCat(std::string(host), ":", port,
                                                   " is not on this machine's loopback"));
  }
  const std::filesystem::path target(dir);
  if (target.has_parent_path() && !MakeDir(target.parent_path().string(), 0700)) {
    return Failed("create", target.parent_path().string());
  }
  if (!MakeDir(dir, 0700)) return Failed("create", dir);
  struct stat st {};
  if (::lstat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != ::geteuid()) {
    return absl::FailedPreconditionError(absl::StrCat(dir, " is not a directory of this user"));
  }
  if (::chmod(dir.c_str(), 0700) != 0) return Failed("chmod 700", dir);

  std::error_code ec;
  const std::string absolute = std::filesystem::absolute(token_file, ec).string();
  if (ec) return absl::FailedPreconditionError(absl::StrCat(token_file, ": ", ec.message()));
  // The writer's pid lets readers ignore a record it left behind when killed.
  const std::string text = absl::StrCat(absolute, "\n", ::getpid(), "\n");
  // Replaced through a temporary file, never written through a link.
  absl::StatusOr<os::UniqueFd> dir_fd = os::OpenDirectory(dir);
  absl::Status s = dir_fd.status();
  if (s.ok()) {
    s = os::WriteFileAtomicallyAt(dir_fd->get(), std::filesystem::path(*path).filename().string(),
                                  text, 0600);
  }
  if (!s.ok()) {
    return absl::FailedPreconditionError(
        absl::StrCat("cannot write ", *path, ": ", s.message()));
  }
  if (written != nullptr) *written = *path;
  return absl::OkStatus();
}

namespace {

// The text of the discovery file `path`; empty unless it is a regular file
// of this user in a private directory, and not over 4 KiB (a record is a
// path and a pid).
std::string ReadDiscoveryText(const std::string& path) {
  if (!PrivateDir(std::filesystem::path(path).parent_path().string())) return "";
  const os::UniqueFd fd(::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC));
  if (!fd.valid()) return "";
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != ::geteuid()) {
    return "";
  }
  absl::StatusOr<std::string> text = os::ReadSmallFd(fd.get(), path, kMaxDiscoveryBytes);
  return text.ok() ? *std::move(text) : "";
}

// The first line of the discovery file `path` (the file it names),
// whitespace removed; empty unless the file can be trusted.
std::string ReadDiscovery(const std::string& path) {
  std::string text = ReadDiscoveryText(path);
  if (const size_t nl = text.find('\n'); nl != std::string::npos) text.resize(nl);
  return std::string(absl::StripAsciiWhitespace(text));
}

// Whether the `tempest dev` that wrote the discovery file `path` (its pid
// on the second line) is gone: its record is stale (left by a SIGKILL), and
// the address may since belong to another server.
bool WriterGone(const std::string& path) {
  const std::string text = ReadDiscoveryText(path);
  const size_t nl = text.find('\n');
  int pid = 0;
  if (nl == std::string::npos ||
      !absl::SimpleAtoi(absl::StripAsciiWhitespace(text.substr(nl + 1)), &pid) || pid <= 0) {
    return false;  // an older record without a pid
  }
  return ::kill(pid, 0) != 0 && errno == ESRCH;
}

}  // namespace

void RemoveDevTokenDiscovery(const std::string& path, const std::string& token_file) {
  if (path.empty()) return;
  std::error_code ec;
  const std::string absolute = std::filesystem::absolute(token_file, ec).string();
  if (ReadDiscovery(path) == absolute) ::unlink(path.c_str());
}

std::optional<std::string> FindDevTokenFile(const std::string& dir, std::string_view host,
                                            int port, std::string_view suffix) {
  std::optional<std::string> path = DevTokenDiscoveryPath(dir, host, port, suffix);
  if (!path.has_value()) return std::nullopt;
  const std::string token_file = ReadDiscovery(*path);
  if (token_file.empty() || token_file.front() != '/' || WriterGone(*path)) return std::nullopt;
  if (::access(token_file.c_str(), R_OK) != 0) return std::nullopt;
  return token_file;
}

std::optional<std::string> FindDevZkAuthFile(std::string_view connect) {
  const char* home = std::getenv("HOME");
  const std::string dir = DevTokenDir(home != nullptr ? home : "");
  std::string_view first = connect.substr(0, connect.find_first_of(",/"));
  const size_t colon = first.rfind(':');
  int port = 0;
  if (dir.empty() || colon == std::string_view::npos ||
      !absl::SimpleAtoi(api::Sv(first.substr(colon + 1)), &port)) {
    return std::nullopt;
  }
  return FindDevTokenFile(dir, first.substr(0, colon), port, kDevZkAuthSuffix);
}

}  // namespace tempest::cli
