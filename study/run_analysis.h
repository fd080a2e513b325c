#ifndef TEMPEST_STUDY_RUN_ANALYSIS_H_
#define TEMPEST_STUDY_RUN_ANALYSIS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "study/study_results.h"

namespace tempest::study {

// How the study lays out its input: record `seq` (0..records-1) is sent to
// partition seq % partitions of a fresh topic by one idempotent producer, so
// its offset there is seq / partitions. Pure arithmetic; any thread.
struct RecordLayout {
  int64_t records = 0;
  int partitions = 1;
  int PartitionOf(int64_t seq) const { return static_cast<int>(seq % partitions); }
  int64_t OffsetOf(int64_t seq) const { return seq / partitions; }
  int64_t SeqAt(int partition, int64_t offset) const { return offset * partitions + partition; }
  // How many records partition p holds.
  int64_t CountIn(int partition) const {
    return records / partitions + (partition < records % partitions ? 1 : 0);
  }
};

// Copies of each record a sink received, read from its verifier log(s).
struct DeliveryCounts {
  std::vector<uint32_t> copies;  // indexed by seq
  int64_t unexpected = 0;        // values outside 0..records-1
  int64_t malformed = 0;         // lines that are not a value
};

// Reads verifier logs (plain or deduplicating, bolts/verification_report.h);
// NotFound when a log is missing.
absl::StatusOr<DeliveryCounts> CountDeliveries(const std::vector<std::string>& logs,
                                               int64_t records);

// lost, duplicated, max_copies and replayed from the counts.
void FillDeliveryFigures(const DeliveryCounts& counts, RunResult& run);

// Diffs the final committed offsets (one per partition; -1: unknown) against
// what the sink received: committed_not_processed and processed_not_committed.
void FillOffsetDiff(const DeliveryCounts& counts, const RecordLayout& layout,
                    const std::vector<int64_t>& committed, RunResult& run);

// Records in [from[p], to[p]) of each partition that `counts` does not hold:
// what retention deleted before anyone processed it.
int64_t UnreceivedInRanges(const DeliveryCounts& counts, const RecordLayout& layout,
                           const std::vector<int64_t>& from, const std::vector<int64_t>& to);

// commit_blocked_s, recovery_s and the three throughputs from run.samples and
// the fault times. `production_s` is when the last record was produced.
//
// Recovery: if the sink stops (no new record for `stall_s` while it lacks
// produced records and commits lag) within the fault window or up to 5 s
// after the fault starts,
// recovery_s is the time from the fault to the sink's first new record after
// that stall; if it never stops, 0; if it never resumes, absent.
void FillTimeline(RunResult& run, double stall_s = 1.0);

// The expectations of the run's guarantee it broke, in words.
std::vector<std::string> CheckExpectations(const RunResult& run);

}  // namespace tempest::study

#endif  // TEMPEST_STUDY_RUN_ANALYSIS_H_
