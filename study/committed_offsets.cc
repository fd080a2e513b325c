#include "study/committed_offsets.h"

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "spout/kafka/offsets/offset_admin.h"
#include "spout/kafka/offsets/offset_journal.h"
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

std::vector<PartitionJournal> ReadJournals(coord::ZkSession& zk, const std::string& spout_id,
                                           const std::string& topic,
                                           const std::vector<int64_t>& committed, int partitions) {
  std::vector<PartitionJournal> out(partitions);
  for (int p = 0; p < partitions; ++p) {
    // One topic: the flat layout (no {topic}/ level), as the spout writes it.
    const std::string dir = spout::JournalDirPath(kStudyOffsetsRoot, spout_id, topic, p, false);
    absl::StatusOr<spout::JournalRead> read = spout::ReadJournal(zk, dir);
    if (p < static_cast<int>(committed.size()) && committed[p] >= 0) {
      out[p].stored_offset = committed[p];
    }
    if (!read.ok()) {
      out[p].unreadable = std::string(read.status().message());
      continue;
    }
    out[p].entries = std::move(read->entries);
    if (read->unreadable > 0) {
      out[p].unreadable = absl::StrCat(read->unreadable, " entries did not decode");
    }
  }
  return out;
}

}  // namespace tempest::study
