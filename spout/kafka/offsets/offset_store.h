#ifndef TEMPEST_SPOUT_OFFSET_STORE_H_
#define TEMPEST_SPOUT_OFFSET_STORE_H_

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "spout/kafka/offsets/journal_entry.h"
#include "spout/kafka/offsets/offset_journal.h"
#include "spout/kafka/offsets/partition_assignment.h"
#include "spout/kafka/offsets/storm_kafka_offset.h"
#include "spout/kafka/offsets/partition_assignment.h"

namespace tempest::spout {

// What the store tells its spout. Delivered in the order things happened.
struct OffsetStoreUpdate {
  enum class Kind {
    kAcquired,      // we own `partition`; `stored` is its node (nullopt: none yet)
    kLost,          // ownership gone (session lost, fenced, version conflict,
                    // released): stop emitting, drop in-flight bookkeeping
    kCommitted,     // `offset` is durably stored for `partition`
    kCommitFailed,  // a commit could not be sent or confirmed (`status`)
    kReadFailed,    // the stored node cannot be used (`status`); retried
  };
  Kind kind = Kind::kCommitFailed;
  TopicPartition partition;
  // kAcquired: identifies this ownership epoch; commits must quote it.
  uint64_t acquisition = 0;
  std::optional<StormKafkaOffset> stored;
  int64_t session_id = 0;   // kAcquired: the owning session
  int64_t owner_czxid = 0;  // kAcquired: fencing token of the owner node
  int64_t offset = 0;       // kCommitted
  absl::Status status;      // kCommitFailed / kReadFailed / kLost (why)
};

// One partition's commit: the JSON to store, under an ownership epoch.
struct OffsetCommit {
  TopicPartition partition;
  uint64_t acquisition = 0;
  StormKafkaOffset state;  // state.offset is the offset to store
  // Journal entries (out-of-range resets, dead letters, rewinds) written in
  // the same multi as this commit, before its own commit entry; also sent
  // when the offset itself does not move. A later request for the same
  // partition keeps the entries of one that has not gone out yet.
  std::vector<JournalEntry> journal;
};

// What a KafkaSpout needs from the place its offsets live: per-partition
// ownership for the partitions it is assigned, the stored offset read at
// each acquisition, fenced commits, and release. Requests only post; every
// answer comes back as an OffsetStoreUpdate through TakeUpdates, so the
// spout never blocks on the store.
//
// Owned and called by the spout's executor thread (an implementation may do
// its work on threads of its own). The real one is ZkOffsetStore; unit tests
// use a scripted fake.
class OffsetStore {
 public:
  virtual ~OffsetStore() = default;

  // The partitions this task should own. Partitions that leave are released
  // after any commit requested before this call.
  virtual void SetAssignment(std::vector<TopicPartition> partitions) = 0;
  // Commits on the next round; a later request for the same partition
  // replaces an earlier one that has not gone out yet.
  virtual void RequestCommit(std::vector<OffsetCommit> commits) = 0;
  virtual std::vector<OffsetStoreUpdate> TakeUpdates() = 0;
  // Cheap check for the executor's hot loop.
  virtual bool HasUpdates() const = 0;
  // Sends outstanding commits (waiting at most `timeout`) and releases
  // ownership. Idempotent.
  virtual void Close(std::chrono::milliseconds timeout) = 0;
};

}  // namespace tempest::spout

#endif  // TEMPEST_SPOUT_OFFSET_STORE_H_
