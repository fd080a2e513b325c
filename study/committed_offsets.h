#ifndef TEMPEST_STUDY_COMMITTED_OFFSETS_H_
#define TEMPEST_STUDY_COMMITTED_OFFSETS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/coord/zk_session.h"
#include "study/range_explanation.h"

namespace tempest::study {

// The offsets the spout `spout_id` committed under kStudyOffsetsRoot, one per
// partition (-1: absent or unreadable; 0 for every partition before its first
// commit). Nullopt when ZooKeeper could not be read at all. Blocks on `zk`;
// any thread that owns `zk` (the sampler, or the main thread for the final
// read and the retention fault).
std::optional<std::vector<int64_t>> ReadCommitted(coord::ZkSession& zk,
                                                  const std::string& spout_id, int partitions);

// The offset journal of each partition of `topic` the spout `spout_id` keeps
// under kStudyOffsetsRoot, with `committed` (ReadCommitted's answer; -1 or
// missing: none stored) as each one's stored offset. A partition whose
// journal cannot be read says why in `unreadable`. Blocks on `zk`; the thread
// that owns it, while the run's ZooKeeper is still up.
std::vector<PartitionJournal> ReadJournals(coord::ZkSession& zk, const std::string& spout_id,
                                           const std::string& topic,
                                           const std::vector<int64_t>& committed, int partitions);

}  // namespace tempest::study

#endif  // TEMPEST_STUDY_COMMITTED_OFFSETS_H_
