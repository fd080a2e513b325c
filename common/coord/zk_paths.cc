#include "common/coord/zk_paths.h"

#include <algorithm>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace tempest::coord {

absl::Status ValidatePath(absl::string_view path) {
  if (path.empty() || path[0] != '/') {
    return absl::InvalidArgumentError(absl::StrCat("znode path must be absolute: '", path, "'"));
  }
  if (path == "/") return absl::OkStatus();
  if (path.back() == '/') {
    return absl::InvalidArgumentError(absl::StrCat("znode path ends with '/': '", path, "'"));
  }
  if (path.find('\0') != absl::string_view::npos) {
    return absl::InvalidArgumentError("znode path contains NUL");
  }
  for (absl::string_view part : absl::StrSplit(path.substr(1), '/')) {
    if (part.empty() || part == "." || part == "..") {
      return absl::InvalidArgumentError(absl::StrCat("bad znode path component in '", path, "'"));
    }
  }
  return absl::OkStatus();
}

std::string JoinPath(absl::string_view parent, absl::string_view child) {
  if (parent == "/" || parent.empty()) return absl::StrCat("/", child);
  return absl::StrCat(parent, "/", child);
}

std::string ParentPath(absl::string_view path) {
  auto pos = path.rfind('/');
  if (pos == absl::string_view::npos || pos == 0) return "/";
  return std::string(path.substr(0, pos));
}

std::string BaseName(absl::string_view path) {
  auto pos = path.rfind('/');
  if (pos == absl::string_view::npos) return std::string(path);
  return std::string(path.substr(pos + 1));
}

std::vector<std::string> Ancestors(absl::string_view path) {
  std::vector<std::string> out;
  for (size_t pos = path.find('/', 1); pos != absl::string_view::npos;
       pos = path.find('/', pos + 1)) {
    out.emplace_back(path.substr(0, pos));
  }
  return out;
}

std::optional<int64_t> SequenceNumber(absl::string_view name) {
  constexpr size_t kDigits = 10;
  if (name.size() < kDigits) return std::nullopt;
  absl::string_view tail = name.substr(name.size() - kDigits);
  for (char c : tail) {
    if (!absl::ascii_isdigit(static_cast<unsigned char>(c))) return std::nullopt;
  }
  int64_t value = 0;
  if (!absl::SimpleAtoi(tail, &value)) return std::nullopt;
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

absl::Status SplitConnectString(absl::string_view connect, std::string* hosts,
                                std::string* chroot) {
  auto slash = connect.find('/');
  if (slash == absl::string_view::npos) {
    *hosts = std::string(connect);
    chroot->clear();
  } else {
    *hosts = std::string(connect.substr(0, slash));
    *chroot = std::string(connect.substr(slash));
    if (*chroot == "/") chroot->clear();
    if (!chroot->empty()) {
      if (auto s = ValidatePath(*chroot); !s.ok()) return s;
    }
  }
  if (hosts->empty()) return absl::InvalidArgumentError("empty ZooKeeper connect string");
  return absl::OkStatus();
}

}  // namespace tempest::coord
