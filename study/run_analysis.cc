#include "study/run_analysis.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "bolts/verification_report.h"

namespace tempest::study {

absl::StatusOr<DeliveryCounts> CountDeliveries(const std::vector<std::string>& logs,
                                               int64_t records) {
  DeliveryCounts counts;
  counts.copies.assign(static_cast<size_t>(std::max<int64_t>(records, 0)), 0);
  for (const std::string& log : logs) {
    absl::Status s = bolts::ForEachLogLine(log, [&](std::string_view line, bool complete) {
      if (!complete || line.empty() || line[0] == '!') {
        ++counts.malformed;
        return;
      }
      if (line[0] == '=') return;  // a replay the dedup sink dropped: not a delivery
      if (line[0] == '@') {        // "@topic partition offset value": the value is last
        const size_t space = line.rfind(' ');
        line = space == std::string_view::npos ? std::string_view() : line.substr(space + 1);
      }
      int64_t seq = 0;
      if (!absl::SimpleAtoi(absl::string_view(line.data(), line.size()), &seq)) {
        ++counts.malformed;
      } else if (seq < 0 || seq >= records) {
        ++counts.unexpected;
      } else {
        ++counts.copies[static_cast<size_t>(seq)];
      }
    });
    if (!s.ok()) return s;
  }
  return counts;
}

void FillDeliveryFigures(const DeliveryCounts& counts, RunResult& run) {
  run.lost = run.duplicated = run.max_copies = run.replayed = 0;
  for (uint32_t c : counts.copies) {
    if (c == 0) ++run.lost;
    if (c > 1) {
      run.duplicated += c - 1;
      ++run.replayed;
    }
    run.max_copies = std::max<int64_t>(run.max_copies, c);
  }
}

void FillOffsetDiff(const DeliveryCounts& counts, const RecordLayout& layout,
                    const std::vector<int64_t>& committed, RunResult& run) {
  run.committed_not_processed = run.processed_not_committed = 0;
  for (int64_t seq = 0; seq < static_cast<int64_t>(counts.copies.size()); ++seq) {
    const int p = layout.PartitionOf(seq);
    if (p >= static_cast<int>(committed.size()) || committed[p] < 0) continue;
    const bool below = layout.OffsetOf(seq) < committed[p];
    const bool received = counts.copies[static_cast<size_t>(seq)] > 0;
    if (below && !received) ++run.committed_not_processed;
    if (!below && received) ++run.processed_not_committed;
  }
}

int64_t UnreceivedInRanges(const DeliveryCounts& counts, const RecordLayout& layout,
                           const std::vector<int64_t>& from, const std::vector<int64_t>& to) {
  int64_t n = 0;
  for (int p = 0; p < layout.partitions && p < static_cast<int>(from.size()) &&
                  p < static_cast<int>(to.size());
       ++p) {
    for (int64_t offset = std::max<int64_t>(from[p], 0);
         offset < std::min(to[p], layout.CountIn(p)); ++offset) {
      const int64_t seq = layout.SeqAt(p, offset);
      if (seq < static_cast<int64_t>(counts.copies.size()) &&
          counts.copies[static_cast<size_t>(seq)] == 0) {
        ++n;
      }
    }
  }
  return n;
}

namespace {

// Records the sink received over [from_s, to_s] (linear between samples is
// not needed: samples are dense), per second; 0 for an empty interval.
double RateBetween(const std::vector<Sample>& samples, double from_s, double to_s) {
  if (samples.empty() || to_s - from_s < 0.2) return 0;
  // What the sink held just before `t`: windows [a, b) and [b, c) add up.
  auto at = [&](double t) {
    int64_t v = samples.front().sink_received;
    for (const Sample& s : samples) {
      if (s.t_s >= t) break;
      v = s.sink_received;
    }
    return v;
  };
  return static_cast<double>(at(to_s) - at(from_s)) / (to_s - from_s);
}

double Round1(double v) { return std::round(v * 10.0) / 10.0; }

}  // namespace

void FillTimeline(RunResult& run, double stall_s) {
  const std::vector<Sample>& s = run.samples;
  run.commit_blocked_s = 0;
  run.recovery_s.reset();
  run.throughput_before = run.throughput_during = run.throughput_after = 0;
  if (s.empty()) return;

  // Commits standing still while there is lag (an unreadable commit counts
  // as standing still: ZooKeeper being away is exactly when commits block).
  double last_advance = s.front().t_s;
  int64_t last_committed = s.front().committed;
  for (const Sample& x : s) {
    const bool lag = x.committed < 0 || x.committed < x.log_end;
    if (!lag || (x.committed >= 0 && x.committed > last_committed)) {
      last_advance = x.t_s;
    } else {
      run.commit_blocked_s = std::max(run.commit_blocked_s, x.t_s - last_advance);
    }
    if (x.committed >= 0) last_committed = std::max(last_committed, x.committed);
  }
  run.commit_blocked_s = Round1(run.commit_blocked_s);

  // When the sink got its last record.
  const int64_t final_count = s.back().sink_received;
  double done_s = s.back().t_s;
  for (const Sample& x : s) {
    if (x.sink_received == final_count) {
      done_s = x.t_s;
      break;
    }
  }
  if (!run.fault_start_s.has_value()) {
    run.throughput_before = Round1(RateBetween(s, 0, done_s));
    return;
  }
  const double fault = *run.fault_start_s;
  const double fault_end = std::max(fault, run.fault_end_s.value_or(fault));
  run.throughput_before = Round1(RateBetween(s, 0, fault));

  // Find a stall that starts within the fault window (or its first 5 s) and
  // the first progress after it.
  const double stall_search_end = std::max(fault_end, fault + 5.0);
  std::optional<double> stalled_since;
  std::optional<double> recovered_at;
  bool stalled = false;
  int64_t prev = -1;
  double last_progress = fault;
  for (const Sample& x : s) {
    if (x.t_s < fault) {
      prev = x.sink_received;
      continue;
    }
    if (prev < 0) prev = x.sink_received;
    const bool progressed = x.sink_received > prev;
    prev = x.sink_received;
    if (progressed) {
      if (stalled) {
        recovered_at = x.t_s;
        break;
      }
      last_progress = x.t_s;
      continue;
    }
    // Work is outstanding while commits lag (unknown counts as lagging) and
    // the sink lacks produced records: a sink that already holds everything
    // is not stalled by blocked commits, and one whose missing records were
    // lost for good (committed past them) is not waiting for anything.
    const bool commits_lag = x.committed < 0 || x.committed < x.log_end;
    const bool outstanding = commits_lag && (x.sink_distinct < 0 || x.sink_distinct < x.log_end);
    if (!stalled && outstanding && x.t_s - last_progress >= stall_s &&
        last_progress <= stall_search_end) {
      stalled = true;
      stalled_since = last_progress;
    }
    if (!stalled && x.t_s > stall_search_end + stall_s) break;  // it never stopped
  }
  double recovery_point = fault;
  if (!stalled) {
    run.recovery_s = 0;
    recovery_point = fault_end;
  } else if (recovered_at.has_value()) {
    run.recovery_s = Round1(*recovered_at - fault);
    recovery_point = *recovered_at;
  } else {
    recovery_point = s.back().t_s;
  }
  // An instant fault the sink never noticed has no "during".
  run.throughput_during = recovery_point - fault >= 0.2
                              ? Round1(RateBetween(s, fault, recovery_point))
                              : std::nan("");
  // A backlog drained within one sample still gets a rate over at least 1 s.
  // Nothing left after recovery (the sink finished during the fault): NaN,
  // "not applicable", rather than a misleading 0.
  if (done_s > recovery_point) {
    run.throughput_after =
        Round1(RateBetween(s, recovery_point, std::max(done_s + 0.2, recovery_point + 1.0)));
  } else {
    run.throughput_after = std::nan("");
  }
}

std::vector<std::string> CheckExpectations(const RunResult& run) {
  std::vector<std::string> v;
  if (run.offset_regressions != 0) {
    v.push_back(absl::StrCat("a committed offset went backwards ", run.offset_regressions,
                             " times"));
  }
  if (!run.quiesced) v.push_back("the run did not settle before its deadline");
  if (run.guarantee == "at-least-once") {
    if (run.lost != run.expected_loss) {
      v.push_back(absl::StrCat("at-least-once lost ", run.lost, " records (expected ",
                               run.expected_loss, ")"));
    }
    if (run.committed_not_processed != run.expected_loss) {
      v.push_back(absl::StrCat("at-least-once committed ", run.committed_not_processed,
                               " offsets its sink never received (expected ", run.expected_loss,
                               ")"));
    }
    if (run.dedup_sink.has_value()) {
      if (run.dedup_sink->lost != run.dedup_sink->expected_loss) {
        v.push_back(absl::StrCat("the effectively-once sink lost ", run.dedup_sink->lost,
                                 " records (expected ", run.dedup_sink->expected_loss, ")"));
      }
      if (run.dedup_sink->duplicated != 0) {
        v.push_back(absl::StrCat("the effectively-once sink applied ", run.dedup_sink->duplicated,
                                 " duplicates"));
      }
    }
  } else if (run.guarantee == "at-most-once") {
    if (run.duplicated != 0) {
      v.push_back(absl::StrCat("at-most-once delivered ", run.duplicated, " duplicates"));
    }
  }
  if (run.processed_not_committed != 0 && run.quiesced) {
    v.push_back(absl::StrCat(run.processed_not_committed,
                             " records reached the sink but stayed above the final commit"));
  }
  return v;
}

}  // namespace tempest::study
