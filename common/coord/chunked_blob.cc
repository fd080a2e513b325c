#include "common/coord/chunked_blob.h"

#include <algorithm>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/core/status_macros.h"

namespace tempest::coord {

absl::StatusOr<int> WriteChunkedBlob(ZkSession& session, const std::string& dir,
                                     std::string_view data, const std::optional<ZkAcl>& acl) {
  ZkCreateOptions create;
  create.create_parents = true;
  create.acl = acl;
  int chunks = 0;
  for (size_t off = 0; off < data.size() || chunks == 0; off += kChunkBytes) {
    const std::string_view chunk = data.substr(off, std::min(kChunkBytes, data.size() - off));
    absl::StatusOr<std::string> created =
        session.Create(absl::StrCat(dir, "/", chunks), chunk, create);
    if (!created.ok()) {
      // Best effort: the create's error is the one to report, and a blob
      // left half-written is never read: no record names it.
      (void)DeleteChunkedBlob(session, dir);
      return created.status();
    }
    ++chunks;
    if (data.empty()) break;
  }
  return chunks;
}

absl::StatusOr<std::string> ReadChunkedBlob(ZkSession& session, const std::string& dir,
                                            int chunks, int64_t expected_bytes) {
  if (chunks < 1 || expected_bytes < 0) {
    return absl::DataLossError(absl::StrCat("blob ", dir, " has no chunks"));
  }
  std::string out;
  out.reserve(static_cast<size_t>(expected_bytes));
  for (int i = 0; i < chunks; ++i) {
    absl::StatusOr<ZkNode> node = session.Get(absl::StrCat(dir, "/", i));
    if (!node.ok()) {
      return absl::Status(node.status().code(),
                          absl::StrCat("blob ", dir, " chunk ", i, ": ", node.status().message()));
    }
    out += node->data;
    if (static_cast<int64_t>(out.size()) > expected_bytes) break;
  }
  if (static_cast<int64_t>(out.size()) != expected_bytes) {
    return absl::DataLossError(absl::StrCat("blob ", dir, " holds ", out.size(),
                                            " bytes, its record says ", expected_bytes));
  }
  return out;
}

absl::Status DeleteChunkedBlob(ZkSession& session, const std::string& dir) {
  absl::StatusOr<std::vector<std::string>> children = session.Children(dir);
  if (absl::IsNotFound(children.status())) return absl::OkStatus();
  RETURN_IF_ERROR(children.status());
  for (const std::string& child : *children) {
    absl::Status s = session.Delete(absl::StrCat(dir, "/", child));
    if (!s.ok() && !absl::IsNotFound(s)) return s;
  }
  absl::Status s = session.Delete(dir);
  return s.ok() || absl::IsNotFound(s) ? absl::OkStatus() : s;
}

}  // namespace tempest::coord
