#ifndef TEMPEST_COMMON_COORD_CHUNKED_BLOB_H_
#define TEMPEST_COMMON_COORD_CHUNKED_BLOB_H_

#include <cstddef>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/coord/zk_session.h"

namespace tempest::coord {

// A byte string larger than one znode may hold (ZooKeeper's jute.maxbuffer
// is 1 MiB), stored as persistent children {dir}/0 .. {dir}/n-1 of at most
// kChunkBytes each. Every nimbus and worker reads it straight from the
// ensemble, so it is replicated wherever ZooKeeper is.
inline constexpr size_t kChunkBytes = 512 << 10;

// Writes the chunks (creating `dir`); returns how many. On failure what was
// written is deleted (best effort). `acl`: the ACL of `dir` and the chunks
// (nullopt: the session's policy).
absl::StatusOr<int> WriteChunkedBlob(ZkSession& session, const std::string& dir,
                                     std::string_view data,
                                     const std::optional<ZkAcl>& acl = std::nullopt);
// Reads `chunks` chunks and checks the total is `expected_bytes`
// (DataLoss otherwise: a blob cut short by a crash is never used).
absl::StatusOr<std::string> ReadChunkedBlob(ZkSession& session, const std::string& dir,
                                            int chunks, int64_t expected_bytes);
// Deletes the chunks and `dir`; absent is fine.
absl::Status DeleteChunkedBlob(ZkSession& session, const std::string& dir);

}  // namespace tempest::coord

#endif  // TEMPEST_COMMON_COORD_CHUNKED_BLOB_H_
