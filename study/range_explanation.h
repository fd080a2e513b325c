#ifndef TEMPEST_STUDY_RANGE_EXPLANATION_H_
#define TEMPEST_STUDY_RANGE_EXPLANATION_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "spout/kafka/offsets/offset_journal.h"
#include "study/run_analysis.h"
#include "study/study_results.h"

namespace tempest::study {

// The report lists at most this many ranges per run, the largest first
// chosen; the rest are counted ("and N more ranges").
inline constexpr int kMaxExplainedRanges = 20;

// The cause of a range the journal says nothing about.
inline constexpr char kNotExplained[] = "not explained by the journal";

std::string_view RangeKindName(RangeKind kind);  // "lost" | "duplicated"
std::optional<RangeKind> ParseRangeKind(std::string_view name);

// One partition's offset journal as read at the end of a run.
struct PartitionJournal {
  std::vector<spout::JournalEntry> entries;  // oldest first
  std::optional<int64_t> stored_offset;      // the final committed offset; none stored
  std::string unreadable;                    // why the journal could not be read; "" when it was
};

struct ExplainedRanges {
  std::vector<RangeExplanation> ranges;  // by partition, then offset
  int64_t omitted = 0;                   // ranges past the cap
};

// Groups the offsets of each partition that `counts` lacks (lost) or holds
// more than once (duplicated) into ranges of consecutive offsets, split
// where the journal's explanation changes, and explains each from
// `journals` (indexed by partition; a missing one explains nothing):
//   lost: inside a reset gap or skipped by a manual set or rewind (its
//     reason), dead-lettered (topic and failures), or committed past without
//     reaching the sink (the commit);
//   duplicated: the range starts exactly at the offset a re-acquisition, an
//     ownership change, a rewind or a backward set or reset left the
//     partition at (that entry);
//   anything else: kNotExplained. Never guesses. Keeps the `max_ranges`
// largest ranges. Pure; any thread.
ExplainedRanges ExplainRanges(const DeliveryCounts& counts, const RecordLayout& layout,
                              const std::string& topic,
                              const std::vector<PartitionJournal>& journals,
                              int max_ranges = kMaxExplainedRanges);

// Commit entries written by a session other than the one whose acquisition
// entry precedes them in their partition's journal: an owner that had been
// replaced still committing (fencing makes this 0). Commits before the first
// acquisition entry left in a journal (trimmed history) are not counted.
// Pure; any thread.
int64_t CountZombieCommits(const std::vector<PartitionJournal>& journals);

}  // namespace tempest::study

#endif  // TEMPEST_STUDY_RANGE_EXPLANATION_H_
