#ifndef TEMPEST_COMMON_NET_STATIC_FILES_H_
#define TEMPEST_COMMON_NET_STATIC_FILES_H_

#include <filesystem>
#include <memory>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace tempest::net {

// Serves files below one directory (the web UI) for URL paths, refusing
// anything that would resolve outside it: ".." segments, encoded slashes or
// NULs, and symlinks that point out of the root. Owns nothing but the
// canonical root path; immutable after Create, so safe on any thread.
class StaticFiles {
 public:
  struct File {
    std::string content_type;
    std::string body;
  };

  // `root` must be an existing directory.
  static absl::StatusOr<std::unique_ptr<StaticFiles>> Create(const std::string& root);

  // Reads the file for `url_path` ("/" and directories map to index.html).
  // NotFound for missing files; PermissionDenied for paths escaping the
  // root; InvalidArgument for malformed escapes.
  absl::StatusOr<File> Read(std::string_view url_path) const;

  static std::string ContentTypeFor(const std::filesystem::path& path);

 private:
  explicit StaticFiles(std::filesystem::path root) : root_(std::move(root)) {}
  std::filesystem::path root_;
};

}  // namespace tempest::net

#endif  // TEMPEST_COMMON_NET_STATIC_FILES_H_
