#ifndef TEMPEST_BOLTS_APPEND_ONLY_FILE_H_
#define TEMPEST_BOLTS_APPEND_ONLY_FILE_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "common/os/unique_fd.h"

namespace tempest::bolts {

// An append-only file that reports exactly when data is written and when it
// is durable. Owns one file descriptor (O_APPEND, created 0644 with missing
// parent directories); closed on destruction. Not thread-safe: one owner
// thread (a bolt's executor). Meant for a single writer per file; with
// several writers DropTornTail and the rollback on failure could cut
// another writer's data.
//
//   auto log = AppendOnlyFile::Open("/tmp/x.log");
//   (*log)->DropTornTail();               // after a crash mid-write
//   (*log)->Append("1\n2\n", /*sync=*/true);  // written + fdatasync'ed
class AppendOnlyFile {
 public:
  // Opens (creating) `path` for appending. Errors name the path.
  static absl::StatusOr<std::unique_ptr<AppendOnlyFile>> Open(const std::string& path);
  ~AppendOnlyFile();
  AppendOnlyFile(const AppendOnlyFile&) = delete;
  AppendOnlyFile& operator=(const AppendOnlyFile&) = delete;

  // If the file does not end with '\n' (a write torn by a crash), truncates
  // it after its last '\n'. A torn line was never acknowledged (data is made
  // durable before acks), so dropping it loses nothing and keeps a partial
  // number from being glued to the next one. Returns the bytes dropped.
  absl::StatusOr<int64_t> DropTornTail();

  // Writes all of `data` (retrying short writes and EINTR) and, with `sync`,
  // fdatasyncs it. OK means the bytes are in the file (and on stable storage
  // with `sync`). On error the file is truncated back to its previous size
  // (best effort) so no partial record stays behind.
  absl::Status Append(std::string_view data, bool sync);

  const std::string& path() const { return path_; }
  // Bytes appended through this object.
  int64_t bytes_appended() const { return bytes_appended_; }

 private:
  AppendOnlyFile(std::string path, os::UniqueFd fd) : path_(std::move(path)), fd_(std::move(fd)) {}

  std::string path_;
  os::UniqueFd fd_;
  int64_t bytes_appended_ = 0;
};

}  // namespace tempest::bolts

#endif  // TEMPEST_BOLTS_APPEND_ONLY_FILE_H_
