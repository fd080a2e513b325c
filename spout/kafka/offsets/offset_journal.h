#ifndef TEMPEST_SPOUT_OFFSET_JOURNAL_H_
#define TEMPEST_SPOUT_OFFSET_JOURNAL_H_

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/coord/zk_session.h"
#include "spout/kafka/offsets/journal_entry.h"
#include "spout/kafka/offsets/partition_assignment.h"

namespace tempest::spout {

// The per-partition offset journal: an append-only, bounded record of what
// moved a partition's stored offset, kept next to the storm-kafka offset
// node under "@journal" (a name no Kafka topic can have, so storm-kafka
// readers of partition_N never see it):
//
//   {zkRoot}/{id}/@journal/partition_{N}/e-{time_ms}-{10-digit sequence}
//   {zkRoot}/{id}/@journal/{topic}/partition_{N}/e-...   (several topics)
//
// Each entry is a persistent-sequential node holding one JSON object
// (EncodeJournalEntry). The spout's commits append their entries inside the
// commit's own multi (ZkOffsetStore), so a fenced commit leaves no entry and
// the commit path makes no extra round trip. The writer's time is in the node
// name, so trimming by age needs only the child list. Layout and fields:
// docs/znode-layout.md.

// Topology config keys (resolved into KafkaSpoutConfig at Open).
inline constexpr char kJournalMaxEntriesKey[] = "tempest.kafka.offset.journal.max.entries";
inline constexpr char kJournalRetentionSecsKey[] = "tempest.kafka.offset.journal.retention.secs";
inline constexpr int64_t kDefaultJournalMaxEntries = 1000;
inline constexpr int64_t kDefaultJournalRetentionSecs = 7 * 24 * 3600;
// At most this many entries are deleted per trim multi.
inline constexpr int kJournalTrimBatch = 100;

// Entry types by name (JournalEntry, JournalEntryType: journal_entry.h).
std::string_view JournalEntryTypeName(JournalEntryType type);  // "commit", "acquired", ...
std::optional<JournalEntryType> ParseJournalEntryType(std::string_view name);

// Compact JSON, one object: {"type":"commit","time":..,"from":..,"to":..,...}.
std::string EncodeJournalEntry(const JournalEntry& entry);
// InvalidArgument naming the problem for anything that is not such an object
// (never crashes on hostile bytes). Unknown keys are ignored.
absl::StatusOr<JournalEntry> DecodeJournalEntry(std::string_view json);

// Paths. The directory holds one partition's entries; an entry name is
// JournalEntryPrefix(dir, time) + the server's 10-digit sequence.
std::string JournalDirPath(const std::string& zk_root, const std::string& spout_id,
                           const std::string& topic, int partition, bool topic_level);
std::string JournalEntryPrefix(const std::string& dir, int64_t time_ms);
// "e-1700000000000-0000000042" -> (time 1700000000000, sequence 42); nullopt
// for a name this code did not write.
struct JournalNodeName {
  int64_t time_ms = 0;
  int64_t sequence = 0;
};
std::optional<JournalNodeName> ParseJournalNodeName(std::string_view name);

// The op that appends `entry` to the journal directory `dir`, to put in a
// multi with the write it describes (the directory must exist: see
// EnsureJournalDir). ZkOffsetStore uses it for commits; `tempest offsets set`
// for a manual set, next to its offset write.
coord::ZkOp JournalAppendOp(const std::string& dir, const JournalEntry& entry);
absl::Status EnsureJournalDir(coord::ZkSession& session, const std::string& dir,
                              const coord::ZkCall& call = {});
// A standalone append (ensures the directory first): for tools writing an
// entry that has no multi of its own.
absl::Status AppendJournalEntry(coord::ZkSession& session, const std::string& dir,
                                const JournalEntry& entry, const coord::ZkCall& call = {});

// Which children of a journal directory to delete: oldest first, those past
// `max_entries` (counted from the newest) or older than `retention`
// (relative to `now_ms`), at most `batch`. Names this code did not write are
// never chosen. Pure.
std::vector<std::string> JournalNamesToTrim(const std::vector<std::string>& children,
                                            int64_t max_entries, std::chrono::seconds retention,
                                            int64_t now_ms, int batch = kJournalTrimBatch);
// Lists `dir` and deletes what JournalNamesToTrim picks, in one multi.
// Returns how many entries were deleted. NotFound directory: 0.
absl::StatusOr<int> TrimJournal(coord::ZkSession& session, const std::string& dir,
                                int64_t max_entries, std::chrono::seconds retention,
                                int64_t now_ms, const coord::ZkCall& call = {});

// A partition's journal read back, oldest first. Entries that do not decode
// are skipped and counted (`unreadable`), never guessed at.
struct JournalRead {
  std::vector<JournalEntry> entries;
  int unreadable = 0;
};
absl::StatusOr<JournalRead> ReadJournal(coord::ZkSession& session, const std::string& dir,
                                        const coord::ZkCall& call = {});

// What became of one record, from a partition's journal (oldest first) and
// its current stored offset (nullopt: none stored). Pure.
struct OffsetExplanation {
  enum class Verdict {
    kCommitted,     // a commit moved the stored offset past it (`entry`)
    kLost,          // inside a reset gap or skipped by a manual set (`entry`, reason)
    kDeadLettered,  // written to `entry.target_topic` after `entry.failures` failures
    kNotReached,    // at or past the current stored offset
    kUnknown,       // the journal does not reach back that far (or has a hole there)
  };
  Verdict verdict = Verdict::kUnknown;
  std::optional<JournalEntry> entry;  // the entry the verdict rests on
  // Set when a rewind or manual set moved back over the record after an
  // earlier verdict: it was (or will be) delivered again.
  std::optional<JournalEntry> replayed_by;
  std::string text;  // one sentence, e.g. "offset 4500 of legacy/2 is lost: ..."
};
std::string_view VerdictName(OffsetExplanation::Verdict verdict);  // "committed", "lost", ...
OffsetExplanation ExplainOffset(const std::vector<JournalEntry>& entries,
                                std::optional<int64_t> stored_offset, const TopicPartition& tp,
                                int64_t offset);

// One line of `tempest offsets history` for an entry (time in UTC ISO-8601).
std::string DescribeJournalEntry(const JournalEntry& entry);
std::string FormatUtcMillis(int64_t time_ms);  // "2026-01-02T03:04:05.678Z"

}  // namespace tempest::spout

#endif  // TEMPEST_SPOUT_OFFSET_JOURNAL_H_
