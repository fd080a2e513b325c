#ifndef TEMPEST_BOLTS_APPLIED_OFFSETS_H_
#define TEMPEST_BOLTS_APPLIED_OFFSETS_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "absl/container/flat_hash_map.h"

namespace tempest::bolts {

// The identity of one Kafka record: (topic, partition, offset). A plain value.
struct RecordKey {
  std::string topic;
  int64_t partition = 0;
  int64_t offset = 0;

  friend bool operator==(const RecordKey&, const RecordKey&) = default;
  template <typename H>
  friend H AbslHashValue(H h, const RecordKey& k) {
    return H::combine(std::move(h), k.topic, k.partition, k.offset);
  }
};

// Which offsets of which partitions a deduplicating sink has applied, in
// memory bounded by the out-of-order window rather than by the stream length.
//
// Per (topic, partition) it keeps a contiguous watermark W (every offset <= W
// counts as applied) plus the applied offsets above it as disjoint runs
// [first, last]. Adding W+1 (or the offset that closes the gap below the
// lowest run) folds that run into W, so in order traffic costs O(1) memory.
// "Highest applied offset" alone is not enough: the KafkaSpout retries a
// failed offset while later offsets of the partition succeed, so an older
// offset may arrive after newer ones were applied and must still be applied.
//
// Offsets can have permanent holes (compacted topics, transaction markers,
// records given up to a dead-letter topic), which would pin W forever. So W
// also follows the highest applied offset H at a distance of `window`:
// offsets <= H - window count as applied. That is safe when the window is at
// least the spout's out-of-order bound: the KafkaSpout never fetches more than
// `maxUncommittedOffsets` (default 100000) past its committed offset, and
// everything below the committed offset was acked (so, for a sink that acks
// only what it applied, applied) or does not exist; a restarted spout resumes
// at its committed offset, never lower. Memory is then at most one run per
// hole inside the window.
//
// Offsets start at the first one added: before that, W is -1 (nothing
// applied). Not thread-safe; owned by one bolt executor.
class AppliedOffsets {
 public:
  static constexpr int64_t kDefaultWindow = 1'000'000;

  explicit AppliedOffsets(int64_t window = kDefaultWindow) : window_(window < 1 ? 1 : window) {}

  // Whether `key` counts as applied.
  bool Contains(const RecordKey& key) const;
  // Marks `key` applied. Returns false if it already counted as applied.
  bool Add(const RecordKey& key);

  // The watermark of a partition (-1 when nothing is known of it).
  int64_t Watermark(std::string_view topic, int64_t partition) const;
  // Runs kept above the watermark of a partition (0 when unknown).
  int64_t RunsAbove(std::string_view topic, int64_t partition) const;
  // Runs kept above the watermarks, over all partitions (the memory cost).
  int64_t TotalRuns() const;
  int64_t partitions() const { return static_cast<int64_t>(partitions_.size()); }
  int64_t window() const { return window_; }

 private:
  struct Partition {
    int64_t watermark = -1;
    int64_t highest = -1;
    std::map<int64_t, int64_t> runs;  // first -> last, disjoint, above watermark + 1
  };
  const Partition* Find(std::string_view topic, int64_t partition) const;
  static bool Contains(const Partition& p, int64_t offset);

  int64_t window_;
  absl::flat_hash_map<std::pair<std::string, int64_t>, Partition> partitions_;
};

// ---- The dedup log format (one line per record) ----
//
//   @<topic> <partition> <offset> <payload>   a record applied, with its key;
//                                             payload is the integer value, or
//                                             "!field=text" when it is not one
//   =<topic> <partition> <offset>             a replay of an applied key,
//                                             dropped (acked, not re-applied)
//
// A topic is non-empty and has no spaces or control characters (Kafka's
// topic names are [a-zA-Z0-9._-]). Lines of the plain verifier format (a bare
// integer, or "!..." for a malformed input) never start with '@' or '='.

// Whether `topic` can be written into a dedup line.
bool IsLoggableTopic(std::string_view topic);
// "@topic partition offset payload\n"; payload must be one line.
std::string AppliedLine(const RecordKey& key, std::string_view payload);
// "=topic partition offset\n".
std::string DroppedLine(const RecordKey& key);

struct DedupLine {
  enum class Kind { kApplied, kDropped };
  Kind kind = Kind::kApplied;
  RecordKey key;
  std::string_view payload;  // kApplied only; points into the parsed line
};
// Parses a line (without its '\n') starting with '@' or '='; nullopt when it
// is not a well-formed dedup line (then it counts as malformed).
std::optional<DedupLine> ParseDedupLine(std::string_view line);

}  // namespace tempest::bolts

#endif  // TEMPEST_BOLTS_APPLIED_OFFSETS_H_
