#include "study/committed_offsets.h"

#include "absl/status/statusor.h"
#include "spout/offset_admin.h"
#include "study/pipeline_topology.h"

namespace tempest::study {

std::optional<std::vector<int64_t>> ReadCommitted(coord::ZkSession& zk,
                                                  const std::string& spout_id, int partitions) {
  absl::StatusOr<std::vector<spout::StoredPartitionOffset>> stored =
      spout::ListStoredOffsets(zk, kStudyOffsetsRoot, spout_id);
  if (!stored.ok()) {
    // Before the first commit the spout's node does not exist yet.
    if (absl::IsNotFound(stored.status())) return std::vector<int64_t>(partitions, 0);
    return std::nullopt;
  }
  std::vector<int64_t> out(partitions, 0);
  for (const spout::StoredPartitionOffset& s : *stored) {
    if (s.partition < 0 || s.partition >= partitions) continue;
    out[s.partition] = s.state.has_value() ? s.state->offset : -1;
  }
  return out;
}

}  // namespace tempest::study
