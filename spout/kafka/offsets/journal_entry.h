#ifndef TEMPEST_SPOUT_KAFKA_OFFSETS_JOURNAL_ENTRY_H_
#define TEMPEST_SPOUT_KAFKA_OFFSETS_JOURNAL_ENTRY_H_

#include <cstdint>
#include <string>

namespace tempest::spout {

// One entry of the per-partition offset journal, as plain data: what the
// offset store carries in a commit (OffsetCommit::journal) without knowing
// the journal's codec, paths or ZooKeeper calls (offset_journal.h).

enum class JournalEntryType {
  kCommit,      // the stored offset moved from `from` to `to`
  kAcquired,    // `owner` (session `session`) took the partition at stored offset `to`
  kReleased,    // `owner` gave the partition up (reassignment or shutdown)
  kReset,       // out of range: [from, to) skipped, `reason` says why
  kDeadLetter,  // record `offset` written to `target_topic` after `failures` failures
  kManualSet,   // an operator set the stored offset from `from` to `to` (tempest offsets set)
  kRewind,      // a live owner moved its position from `from` back (or forward) to `to` on request
};

// One entry. Fields that do not apply to a type are left at their defaults
// and not encoded. `from` = -1 means "no stored offset before".
struct JournalEntry {
  JournalEntryType type = JournalEntryType::kCommit;
  int64_t time_ms = 0;  // writer's wall clock, ms since the epoch
  int64_t from = -1;
  int64_t to = -1;
  int64_t offset = -1;     // kDeadLetter
  std::string owner;       // "topology:component:task" or "tempest offsets set (user@host)"
  std::string session;     // hex ZooKeeper session id of the writer ("" for tools)
  std::string topology;    // topology id
  std::string guarantee;   // kCommit: AT_LEAST_ONCE / AT_MOST_ONCE / NO_GUARANTEE
  std::string reason;      // kReset / kManualSet / kRewind / kReleased: why, in words
  std::string target_topic;  // kDeadLetter
  int64_t failures = 0;      // kDeadLetter
  // Filled by ReadJournal from the node name; not part of the JSON.
  int64_t sequence = -1;
};

}  // namespace tempest::spout

#endif  // TEMPEST_SPOUT_KAFKA_OFFSETS_JOURNAL_ENTRY_H_
