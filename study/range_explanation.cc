#include "study/range_explanation.h"

#include <algorithm>
#include <functional>
#include <tuple>
#include <utility>

#include "absl/strings/str_cat.h"
#include "spout/kafka/offsets/offset_store.h"

namespace tempest::study {
namespace {

using spout::JournalEntry;
using spout::JournalEntryType;
using Verdict = spout::OffsetExplanation::Verdict;

// " by OWNER", or nothing for an entry that names no writer.
std::string By(const JournalEntry& e) {
  return e.owner.empty() ? "" : absl::StrCat(" by ", e.owner);
}

std::string Reason(const JournalEntry& e) {
  return e.reason.empty() ? "" : absl::StrCat(" (", e.reason, ")");
}

std::string StoredText(int64_t offset) {
  return offset < 0 ? std::string("none") : absl::StrCat(offset);
}

// Whether two entries are the same journal node (ExplainOffset returns copies).
bool SameEntry(const std::optional<JournalEntry>& a, const std::optional<JournalEntry>& b) {
  if (!a.has_value() || !b.has_value()) return a.has_value() == b.has_value();
  return std::tie(a->sequence, a->time_ms, a->type, a->from, a->to, a->offset) ==
         std::tie(b->sequence, b->time_ms, b->type, b->from, b->to, b->offset);
}

// What a lost offset's journal verdict says, in words, and the entry it rests on.
std::pair<std::string, std::optional<JournalEntry>> LostCause(const spout::OffsetExplanation& x,
                                                              std::optional<int64_t> stored) {
  if (!x.entry.has_value()) {
    if (x.verdict == Verdict::kNotReached) {
      return {absl::StrCat(kNotExplained, " (the spout's stored offset, ",
                           stored ? StoredText(*stored) : "none", ", has not passed them)"),
              std::nullopt};
    }
    return {kNotExplained, std::nullopt};
  }
  const JournalEntry& e = *x.entry;
  switch (x.verdict) {
    case Verdict::kLost:
      if (e.type == JournalEntryType::kReset) {
        return {
            absl::StrCat("out-of-range reset skipped ", e.from, "–", e.to - 1, By(e), Reason(e)),
            e};
      }
      return {absl::StrCat(e.type == JournalEntryType::kRewind ? "rewind" : "manual offset set",
                           " moved the stored offset forward from ", StoredText(e.from), " to ",
                           e.to, By(e), Reason(e)),
              e};
    case Verdict::kDeadLettered:
      return {absl::StrCat("dead-lettered to ", e.target_topic, " after ", e.failures,
                           e.failures == 1 ? " failure" : " failures"),
              e};
    case Verdict::kCommitted:
      return {absl::StrCat("committed past without reaching the sink (commit ", StoredText(e.from),
                           " -> ", e.to, e.guarantee.empty() ? "" : " under " + e.guarantee, By(e),
                           ")"),
              e};
    case Verdict::kNotReached:
    case Verdict::kUnknown:
      break;
  }
  return {kNotExplained, std::nullopt};
}

// An offset the partition was left at after something other than reading
// forward: reading resumes there, so what was delivered from it on before
// arrives again.
struct ReReadPoint {
  int64_t offset = 0;
  JournalEntry entry;
  std::string cause;
};

// A later acquisition: the stored offset it found is the last one the journal
// set before it (or the entry's own `to` when it holds one).
std::optional<ReReadPoint> AcquisitionPoint(const JournalEntry& e, std::optional<int64_t> stored,
                                            const std::optional<JournalEntry>& previous) {
  const std::optional<int64_t> at = e.to >= 0 ? std::optional<int64_t>(e.to) : stored;
  if (!at.has_value() || !previous.has_value()) return std::nullopt;
  const std::string who = e.owner.empty() ? std::string("an unnamed owner") : e.owner;
  std::string session;
  if (!e.session.empty()) {
    session = previous->session.empty() || previous->session == e.session
                  ? absl::StrCat(" (session ", e.session, ")")
                  : absl::StrCat(" (session ", e.session, ", was ", previous->session, ")");
  }
  const bool same_owner = previous->owner == e.owner;
  return ReReadPoint{
      *at, e,
      absl::StrCat("re-read after ", who,
                   same_owner ? " re-acquired the partition at " : " took the partition over at ",
                   *at, session)};
}

// A move of the stored offset or position backwards (rewind, manual set, reset).
std::optional<ReReadPoint> BackwardMovePoint(const JournalEntry& e) {
  if (e.from < 0 || e.to < 0 || e.to >= e.from) return std::nullopt;
  const char* what = e.type == JournalEntryType::kRewind      ? "a rewind"
                     : e.type == JournalEntryType::kManualSet ? "a manual offset set"
                                                              : "a reset";
  return ReReadPoint{
      e.to, e,
      absl::StrCat("re-read after ", what, " from ", e.from, " back to ", e.to, By(e), Reason(e))};
}

// The re-read points of a partition's journal, oldest first.
std::vector<ReReadPoint> ReReadPoints(const std::vector<JournalEntry>& entries) {
  std::vector<ReReadPoint> out;
  std::optional<int64_t> stored;
  std::optional<JournalEntry> last_acquisition;
  bool read_before = false;  // a commit or an acquisition came earlier
  for (const JournalEntry& e : entries) {
    std::optional<ReReadPoint> point;
    switch (e.type) {
      case JournalEntryType::kAcquired:
        if (read_before) point = AcquisitionPoint(e, stored, last_acquisition);
        last_acquisition = e;
        read_before = true;
        break;
      case JournalEntryType::kCommit:
        read_before = true;
        break;
      case JournalEntryType::kReset:
      case JournalEntryType::kManualSet:
      case JournalEntryType::kRewind:
        point = BackwardMovePoint(e);
        break;
      case JournalEntryType::kReleased:
      case JournalEntryType::kDeadLetter:
        break;
    }
    if (point.has_value()) out.push_back(*std::move(point));
    if (e.type != JournalEntryType::kAcquired && e.type != JournalEntryType::kReleased &&
        e.type != JournalEntryType::kDeadLetter && e.to >= 0) {
      stored = e.to;
    }
  }
  return out;
}

// Calls `run(kind, first, last)` for each maximal run of lost or duplicated
// offsets of partition `p`.
void ForEachRun(const DeliveryCounts& counts, const RecordLayout& layout, int p,
                const std::function<void(RangeKind, int64_t, int64_t)>& run) {
  auto kind_at = [&](int64_t offset) -> std::optional<RangeKind> {
    const int64_t seq = layout.SeqAt(p, offset);
    const uint32_t c = seq < static_cast<int64_t>(counts.copies.size()) ? counts.copies[seq] : 0;
    if (c == 0) return RangeKind::kLost;
    if (c > 1) return RangeKind::kDuplicated;
    return std::nullopt;
  };
  const int64_t n = layout.CountIn(p);
  for (int64_t first = 0; first < n;) {
    const std::optional<RangeKind> kind = kind_at(first);
    int64_t last = first;
    while (last + 1 < n && kind_at(last + 1) == kind) ++last;
    if (kind.has_value()) run(*kind, first, last);
    first = last + 1;
  }
}

// The lost run [first, last], split where the journal's explanation changes.
void ExplainLost(const PartitionJournal& j, const spout::TopicPartition& tp, int64_t first,
                 int64_t last, std::vector<RangeExplanation>& out) {
  for (int64_t start = first; start <= last;) {
    const spout::OffsetExplanation x = ExplainOffset(j.entries, j.stored_offset, tp, start);
    int64_t end = start;
    while (end + 1 <= last) {
      const spout::OffsetExplanation next = ExplainOffset(j.entries, j.stored_offset, tp, end + 1);
      if (next.verdict != x.verdict || !SameEntry(next.entry, x.entry)) break;
      ++end;
    }
    auto [cause, entry] = LostCause(x, j.stored_offset);
    out.push_back(
        {tp.partition, start, end, end - start + 1, RangeKind::kLost, cause, std::move(entry)});
    start = end + 1;
  }
}

void ExplainDuplicated(const DeliveryCounts& counts, const RecordLayout& layout,
                       const std::vector<ReReadPoint>& points, int p, int64_t first, int64_t last,
                       std::vector<RangeExplanation>& out) {
  int64_t extra = 0;
  for (int64_t offset = first; offset <= last; ++offset) {
    extra += counts.copies[layout.SeqAt(p, offset)] - 1;
  }
  RangeExplanation r{p, first, last, extra, RangeKind::kDuplicated, kNotExplained, std::nullopt};
  for (const ReReadPoint& point : points) {
    if (point.offset != first) continue;
    r.cause = point.cause;
    r.entry = point.entry;
    break;
  }
  out.push_back(std::move(r));
}

// Keeps the `max_ranges` largest (the earlier on ties), in partition and offset order.
ExplainedRanges Cap(std::vector<RangeExplanation> all, int max_ranges) {
  auto position = [](const RangeExplanation& r) { return std::tie(r.partition, r.first); };
  ExplainedRanges out;
  const size_t keep = static_cast<size_t>(std::max(max_ranges, 0));
  if (all.size() > keep) {
    std::stable_sort(
        all.begin(), all.end(),
        [](const RangeExplanation& a, const RangeExplanation& b) { return a.count > b.count; });
    out.omitted = static_cast<int64_t>(all.size() - keep);
    all.resize(keep);
  }
  std::sort(all.begin(), all.end(), [&](const RangeExplanation& a, const RangeExplanation& b) {
    return position(a) < position(b);
  });
  out.ranges = std::move(all);
  return out;
}

}  // namespace

std::string_view RangeKindName(RangeKind kind) {
  return kind == RangeKind::kLost ? "lost" : "duplicated";
}

std::optional<RangeKind> ParseRangeKind(std::string_view name) {
  if (name == "lost") return RangeKind::kLost;
  if (name == "duplicated") return RangeKind::kDuplicated;
  return std::nullopt;
}

ExplainedRanges ExplainRanges(const DeliveryCounts& counts, const RecordLayout& layout,
                              const std::string& topic,
                              const std::vector<PartitionJournal>& journals, int max_ranges) {
  std::vector<RangeExplanation> all;
  const PartitionJournal none;
  for (int p = 0; p < layout.partitions; ++p) {
    const PartitionJournal& j = p < static_cast<int>(journals.size()) ? journals[p] : none;
    const std::vector<ReReadPoint> points = ReReadPoints(j.entries);
    const spout::TopicPartition tp{topic, p};
    const size_t before = all.size();
    ForEachRun(counts, layout, p, [&](RangeKind kind, int64_t first, int64_t last) {
      if (kind == RangeKind::kLost) {
        ExplainLost(j, tp, first, last, all);
      } else {
        ExplainDuplicated(counts, layout, points, p, first, last, all);
      }
    });
    if (j.unreadable.empty()) continue;
    for (size_t i = before; i < all.size(); ++i) {
      if (!all[i].entry.has_value()) {
        all[i].cause =
            absl::StrCat(kNotExplained, " (its journal could not be read: ", j.unreadable, ")");
      }
    }
  }
  return Cap(std::move(all), max_ranges);
}

int64_t CountZombieCommits(const std::vector<PartitionJournal>& journals) {
  int64_t zombies = 0;
  for (const PartitionJournal& j : journals) {
    std::optional<std::string> owner;  // the session of the latest acquisition
    for (const spout::JournalEntry& e : j.entries) {
      if (e.type == spout::JournalEntryType::kAcquired) {
        owner = e.session;
      } else if (e.type == spout::JournalEntryType::kCommit && owner.has_value() &&
                 !e.session.empty() && e.session != *owner) {
        ++zombies;
      }
    }
  }
  return zombies;
}

}  // namespace tempest::study
