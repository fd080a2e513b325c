#include "common/coord/zk_paths.h"

#include <algorithm>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "common/core/status_macros.h"

namespace tempest::coord {
namespace {
// This Debian build of absl has its own string_view type.
absl::string_view Av(std::string_view s) { return absl::string_view(s.data(), s.size()); }
}  // namespace

absl::Status ValidatePath(std::string_view path) {
  if (path.empty() || path[0] != '/') {
    return absl::InvalidArgumentError(
        absl::StrCat("znode path must be absolute: '", Av(path), "'"));
  }
  if (path == "/") return absl::OkStatus();
  if (path.back() == '/') {
    return absl::InvalidArgumentError(absl::StrCat("znode path ends with '/': '", Av(path), "'"));
  }
  if (path.find('\0') != std::string_view::npos) {
    return absl::InvalidArgumentError("znode path contains NUL");
  }
  for (absl::string_view part : absl::StrSplit(Av(path.substr(1)), '/')) {
    if (part.empty() || part == "." || part == "..") {
      return absl::InvalidArgumentError(
          absl::StrCat("bad znode path component in '", Av(path), "'"));
    }
  }
  return absl::OkStatus();
}

std::string JoinPath(std::string_view parent, std::string_view child) {
  if (parent == "/" || parent.empty()) return absl::StrCat("/", Av(child));
  return absl::StrCat(Av(parent), "/", Av(child));
}

std::string ParentPath(std::string_view path) {
  auto pos = path.rfind('/');
  if (pos == std::string_view::npos || pos == 0) return "/";
  return std::string(path.substr(0, pos));
}

std::string BaseName(std::string_view path) {
  auto pos = path.rfind('/');
  if (pos == std::string_view::npos) return std::string(path);
  return std::string(path.substr(pos + 1));
}

std::vector<std::string> Ancestors(std::string_view path) {
  std::vector<std::string> out;
  for (size_t pos = path.find('/', 1); pos != std::string_view::npos;
       pos = path.find('/', pos + 1)) {
    out.emplace_back(path.substr(0, pos));
  }
  return out;
}

std::optional<int64_t> SequenceNumber(std::string_view name) {
  constexpr size_t kDigits = 10;
  if (name.size() < kDigits) return std::nullopt;
  std::string_view tail = name.substr(name.size() - kDigits);
  for (char c : tail) {
    if (!absl::ascii_isdigit(static_cast<unsigned char>(c))) return std::nullopt;
  }
  int64_t value = 0;
  if (!absl::SimpleAtoi(Av(tail), &value)) return std::nullopt;
  return value;
}

void SortBySequence(std::vector<std::string>& names) {
  std::stable_sort(names.begin(), names.end(), [](const std::string& a, const std::string& b) {
    auto sa = SequenceNumber(a);
    auto sb = SequenceNumber(b);
    if (sa && sb) return *sa != *sb ? *sa < *sb : a < b;
    if (sa.has_value() != sb.has_value()) return sa.has_value();
    return a < b;
  });
}

absl::Status SplitConnectString(std::string_view connect, std::string* hosts, std::string* chroot) {
  auto slash = connect.find('/');
  if (slash == std::string_view::npos) {
    *hosts = std::string(connect);
    chroot->clear();
  } else {
    *hosts = std::string(connect.substr(0, slash));
    *chroot = std::string(connect.substr(slash));
    if (*chroot == "/") chroot->clear();
    if (!chroot->empty()) {
      RETURN_IF_ERROR(ValidatePath(*chroot));
    }
  }
  if (hosts->empty()) return absl::InvalidArgumentError("empty ZooKeeper connect string");
  return absl::OkStatus();
}

}  // namespace tempest::coord
