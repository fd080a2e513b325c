#include "common/core/topology/topology_resources.h"

#include <filesystem>
#include <fstream>
#include <sstream>
#include <system_error>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/core/status_macros.h"

namespace tempest::core {

namespace fs = std::filesystem;

absl::StatusOr<v1::TopologyResources> CollectResources(const std::string& dir) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    return absl::InvalidArgumentError(absl::StrCat("resources: ", dir, " is not a directory"));
  }
  v1::TopologyResources out;
  int64_t total = 0;
  fs::recursive_directory_iterator it(dir, fs::directory_options::skip_permission_denied, ec);
  if (ec) return absl::InvalidArgumentError(absl::StrCat("resources: cannot read ", dir));
  for (; it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (ec) return absl::InvalidArgumentError(absl::StrCat("resources: cannot read ", dir));
    const fs::path& p = it->path();
    if (p.filename().string().rfind('.', 0) == 0) {
      if (it->is_directory()) it.disable_recursion_pending();
      continue;
    }
    if (!it->is_regular_file()) continue;
    if (out.files_size() >= kMaxResourceFiles) {
      return absl::InvalidArgumentError(
          absl::StrCat("resources: more than ", kMaxResourceFiles, " files under ", dir));
    }
    std::ifstream in(p, std::ios::binary);
    std::stringstream data;
    data << in.rdbuf();
    if (!in) return absl::InvalidArgumentError(absl::StrCat("resources: cannot read ", p.string()));
    total += static_cast<int64_t>(data.str().size());
    if (total > kMaxResourceBytes) {
      return absl::InvalidArgumentError(absl::StrCat("resources: ", dir, " holds more than ",
                                                     kMaxResourceBytes >> 20, " MiB"));
    }
    v1::ResourceFile* f = out.add_files();
    f->set_path(fs::relative(p, dir).generic_string());
    f->set_data(data.str());
    const fs::perms perms = it->status().permissions();
    f->set_executable((perms & fs::perms::owner_exec) != fs::perms::none);
  }
  return out;
}

absl::Status ValidateResources(const v1::TopologyResources& resources) {
  if (resources.files_size() > kMaxResourceFiles) {
    return absl::InvalidArgumentError(absl::StrCat("more than ", kMaxResourceFiles, " resource files"));
  }
  int64_t total = 0;
  for (const v1::ResourceFile& f : resources.files()) {
    const std::string& path = f.path();
    if (path.empty() || path.front() == '/' || path.find('\0') != std::string::npos) {
      return absl::InvalidArgumentError(absl::StrCat("resource path '", path, "' is not relative"));
    }
    for (absl::string_view part : absl::StrSplit(path, '/')) {
      if (part.empty() || part == "." || part == "..") {
        return absl::InvalidArgumentError(
            absl::StrCat("resource path '", path, "' may not contain empty, '.' or '..' parts"));
      }
    }
    total += static_cast<int64_t>(f.data().size());
  }
  if (total > kMaxResourceBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("resources exceed ", kMaxResourceBytes >> 20, " MiB"));
  }
  return absl::OkStatus();
}

absl::Status MaterializeResources(const v1::TopologyResources& resources, const std::string& dir) {
  RETURN_IF_ERROR(ValidateResources(resources));
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return absl::InternalError(absl::StrCat("cannot create ", dir, ": ", ec.message()));
  for (const v1::ResourceFile& f : resources.files()) {
    const fs::path target = fs::path(dir) / f.path();
    fs::create_directories(target.parent_path(), ec);
    if (ec) {
      return absl::InternalError(
          absl::StrCat("cannot create ", target.parent_path().string(), ": ", ec.message()));
    }
    {
      std::ofstream out(target, std::ios::binary | std::ios::trunc);
      out.write(f.data().data(), static_cast<std::streamsize>(f.data().size()));
      if (!out) return absl::InternalError(absl::StrCat("cannot write ", target.string()));
    }
    fs::permissions(target,
                    f.executable() ? fs::perms::owner_all | fs::perms::group_read |
                                         fs::perms::group_exec | fs::perms::others_read |
                                         fs::perms::others_exec
                                   : fs::perms::owner_read | fs::perms::owner_write |
                                         fs::perms::group_read | fs::perms::others_read,
                    ec);
  }
  return absl::OkStatus();
}

}  // namespace tempest::core
