#include "common/net/static_files.h"

#include <algorithm>
#include <fstream>
#include <iterator>
#include <map>
#include <system_error>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/api/string_view_compat.h"
#include "common/net/http_router.h"

namespace tempest::net {
namespace fs = std::filesystem;

namespace {
constexpr uintmax_t kMaxFileBytes = 64u << 20;
}

absl::StatusOr<std::unique_ptr<StaticFiles>> StaticFiles::Create(const std::string& root) {
  std::error_code ec;
  fs::path canonical = fs::canonical(root, ec);
  if (ec || !fs::is_directory(canonical, ec)) {
    return absl::InvalidArgumentError(
        absl::StrCat("static file root '", root, "' is not a directory"));
  }
  return std::unique_ptr<StaticFiles>(new StaticFiles(std::move(canonical)));
}

std::string StaticFiles::ContentTypeFor(const fs::path& path) {
  static const std::map<std::string, std::string> kTypes = {
      {".html", "text/html; charset=utf-8"},
      {".htm", "text/html; charset=utf-8"},
      {".css", "text/css; charset=utf-8"},
      {".js", "application/javascript; charset=utf-8"},
      {".json", "application/json"},
      {".svg", "image/svg+xml"},
      {".png", "image/png"},
      {".jpg", "image/jpeg"},
      {".jpeg", "image/jpeg"},
      {".gif", "image/gif"},
      {".ico", "image/x-icon"},
      {".txt", "text/plain; charset=utf-8"},
      {".map", "application/json"},
      {".woff2", "font/woff2"}};
  auto it = kTypes.find(path.extension().string());
  return it == kTypes.end() ? "application/octet-stream" : it->second;
}

absl::StatusOr<StaticFiles::File> StaticFiles::Read(std::string_view url_path) const {
  fs::path relative;
  for (absl::string_view piece : absl::StrSplit(api::Sv(url_path), '/')) {
    const std::string_view raw = api::StdSv(piece);
    if (raw.empty()) continue;
    std::string seg;
    if (!HttpRouter::PercentDecode(raw, &seg)) {
      return absl::InvalidArgumentError("malformed percent-escape in path");
    }
    // Checked after decoding, so "%2e%2e" and "%2f" cannot sneak through.
    if (seg == "." || seg == ".." || seg.find('/') != std::string::npos ||
        seg.find('\\') != std::string::npos || seg.find('\0') != std::string::npos) {
      return absl::PermissionDeniedError(absl::StrCat("refusing path '", api::Sv(url_path), "'"));
    }
    relative /= seg;
  }
  std::error_code ec;
  fs::path full = root_ / relative;
  if (fs::is_directory(full, ec)) full /= "index.html";
  const fs::path resolved = fs::weakly_canonical(full, ec);
  if (ec) return absl::NotFoundError(absl::StrCat("no file for '", api::Sv(url_path), "'"));
  // Symlinks are resolved by weakly_canonical: the target must still be
  // inside the root.
  const auto diverge = std::mismatch(root_.begin(), root_.end(), resolved.begin(), resolved.end());
  if (diverge.first != root_.end()) {
    return absl::PermissionDeniedError(absl::StrCat("refusing path '", api::Sv(url_path), "'"));
  }
  if (!fs::is_regular_file(resolved, ec)) {
    return absl::NotFoundError(absl::StrCat("no file for '", api::Sv(url_path), "'"));
  }
  const uintmax_t size = fs::file_size(resolved, ec);
  if (ec || size > kMaxFileBytes) {
    return absl::NotFoundError(absl::StrCat("cannot serve '", api::Sv(url_path), "'"));
  }
  std::ifstream in(resolved, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot open '", api::Sv(url_path), "'"));
  File file;
  file.content_type = ContentTypeFor(resolved);
  file.body.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  return file;
}

}  // namespace tempest::net
