#include "study/run_analysis.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <optional>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "bolts/verification_report.h"
#include "common/core/status_macros.h"
#include "study/scenario.h"

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
    RETURN_IF_ERROR(s);
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

namespace {

// The longest time commits stood still while there was lag (an unreadable
// commit counts as standing still: ZooKeeper being away is exactly when
// commits block).
double CommitBlockedS(const std::vector<Sample>& s) {
  double blocked = 0;
  double last_advance = s.front().t_s;
  int64_t last_committed = s.front().committed;
  for (const Sample& x : s) {
    const bool lag = x.committed < 0 || x.committed < x.log_end;
    if (!lag || (x.committed >= 0 && x.committed > last_committed)) {
      last_advance = x.t_s;
    } else {
      blocked = std::max(blocked, x.t_s - last_advance);
    }
    if (x.committed >= 0) last_committed = std::max(last_committed, x.committed);
  }
  return Round1(blocked);
}

// When the sink got its last record.
double SinkDoneS(const std::vector<Sample>& s) {
  const int64_t final_count = s.back().sink_received;
  for (const Sample& x : s) {
    if (x.sink_received == final_count) return x.t_s;
  }
  return s.back().t_s;
}

// A stall of the sink that starts within the fault window (or its first
// 5 s), and the first progress after it.
struct Stall {
  bool stalled = false;
  std::optional<double> recovered_at;
};

Stall FindStall(const std::vector<Sample>& s, double fault, double fault_end, double stall_s) {
  const double stall_search_end = std::max(fault_end, fault + 5.0);
  Stall stall;
  int64_t prev = -1;
  int64_t log_end_at_progress = -1;  // the log end when the sink last moved
  double last_progress = fault;
  for (const Sample& x : s) {
    if (x.t_s < fault) {
      prev = x.sink_received;
      log_end_at_progress = x.log_end;
      continue;
    }
    if (prev < 0) prev = x.sink_received;
    if (log_end_at_progress < 0) log_end_at_progress = x.log_end;
    const bool progressed = x.sink_received > prev;
    prev = x.sink_received;
    if (progressed) {
      if (stall.stalled) {
        stall.recovered_at = x.t_s;
        break;
      }
      last_progress = x.t_s;
      log_end_at_progress = x.log_end;
      continue;
    }
    // Work is outstanding while the sink lacks produced records and either
    // commits lag (unknown counts as lagging) or records were produced since
    // the sink last moved. A sink that already holds everything is not
    // stalled by blocked commits; one whose missing records were lost for
    // good (committed past them) after production ended is not waiting for
    // anything; but a sink standing still while production goes on is
    // stalled even when its spout commits ahead of it (at-most-once).
    const bool commits_lag = x.committed < 0 || x.committed < x.log_end;
    const bool lacks = x.sink_distinct < 0 || x.sink_distinct < x.log_end;
    const bool outstanding = lacks && (commits_lag || x.log_end > log_end_at_progress);
    if (!stall.stalled && outstanding && x.t_s - last_progress >= stall_s &&
        last_progress <= stall_search_end) {
      stall.stalled = true;
    }
    if (!stall.stalled && x.t_s > stall_search_end + stall_s) break;  // it never stopped
  }
  return stall;
}

}  // namespace

void FillTimeline(RunResult& run, double stall_s) {
  const std::vector<Sample>& s = run.samples;
  run.commit_blocked_s = 0;
  run.recovery_s.reset();
  run.throughput_before = run.throughput_during = run.throughput_after = 0;
  if (s.empty()) return;
  run.commit_blocked_s = CommitBlockedS(s);
  const double done_s = SinkDoneS(s);
  if (!run.fault_start_s.has_value()) {
    run.throughput_before = Round1(RateBetween(s, 0, done_s));
    return;
  }
  const double fault = *run.fault_start_s;
  const double fault_end = std::max(fault, run.fault_end_s.value_or(fault));
  run.throughput_before = Round1(RateBetween(s, 0, fault));

  const Stall stall = FindStall(s, fault, fault_end, stall_s);
  double recovery_point = fault;
  run.recover_s.reset();
  if (!stall.stalled) {
    run.recovery_s = 0;
    run.recover_s = 0;
    recovery_point = fault_end;
  } else if (stall.recovered_at.has_value()) {
    run.recovery_s = Round1(*stall.recovered_at - fault);
    run.recover_s = Round1(std::max(0.0, *stall.recovered_at - fault_end));
    recovery_point = *stall.recovered_at;
  } else {
    recovery_point = s.back().t_s;
    // The sink never moved again. The pipeline recovered anyway once nothing
    // was outstanding: production was over and its spout had committed as
    // far as it ever would, so what the sink lacks was given up for good (as
    // at-most-once and no-guarantee may).
    const Sample& last = s.back();
    for (const Sample& x : s) {
      if (x.t_s >= fault && x.committed >= 0 && x.committed >= last.committed &&
          x.log_end >= last.log_end) {
        run.recover_s = Round1(std::max(0.0, x.t_s - fault_end));  // 0: nothing left at the heal
        break;
      }
    }
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
  if (run.zombie_commits != 0) {
    v.push_back(absl::StrCat(run.zombie_commits,
                             " commits were made by an owner after another had taken over"));
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

std::vector<BoundCheck> CheckBounds(const RunResult& run, const PartitionLimits& limits) {
  std::vector<BoundCheck> out;
  auto exact = [&](std::string figure, int64_t value, int64_t bound) {
    out.push_back({std::move(figure), absl::StrCat(value), absl::StrCat("= ", bound),
                   value == bound});
  };
  auto unbounded = [&](std::string figure, int64_t value) {
    out.push_back({std::move(figure), absl::StrCat(value), "none", true});
  };
  auto at_most = [&](std::string figure, std::optional<double> value, double bound) {
    out.push_back({std::move(figure),
                   value.has_value() ? absl::StrFormat("%.1f", *value) : "never",
                   absl::StrFormat("<= %.1f", bound),
                   value.has_value() && *value <= bound});
  };
  if (run.guarantee == "at-least-once") {
    exact("lost", run.lost, run.expected_loss);
  } else {
    unbounded("lost", run.lost);
  }
  if (run.guarantee == "at-most-once") {
    exact("duplicated", run.duplicated, 0);
  } else {
    unbounded("duplicated", run.duplicated);
  }
  if (run.dedup_sink.has_value()) {
    exact("effectively-once lost", run.dedup_sink->lost, run.dedup_sink->expected_loss);
    exact("effectively-once duplicated", run.dedup_sink->duplicated, 0);
  }
  exact("zombie commits", run.zombie_commits, 0);
  if (run.fence_expected) {
    at_most("time to fence (s)", run.fence_s, limits.fence_s);
  } else {
    out.push_back({"time to fence (s)", "n/a", "n/a", true});
  }
  at_most("time to recover (s)", run.recover_s, limits.recover_s);
  if (run.leader_writes_after_loss.has_value()) {
    exact("old leader's writes", *run.leader_writes_after_loss, 0);
  }
  return out;
}

std::string NotTestedReason(const RunResult& run) {
  if (run.samples.empty()) return "nothing was measured (no samples were taken)";
  const Sample& last = run.samples.back();
  if (run.records <= 0 || last.log_end <= 0) return "no records were produced";
  if (last.sink_received <= 0) return "no record reached the sink";
  if (!run.fault_start_s.has_value()) return "";
  const double fault = *run.fault_start_s;
  // What the sink held at the last sample taken at or before the fault.
  int64_t before = 0;
  for (const Sample& x : run.samples) {
    if (x.t_s > fault) break;
    before = x.sink_received;
  }
  if (before <= 0) {
    return absl::StrFormat("the fault fired at %.1f s, before any record had reached the sink",
                           fault);
  }
  if (!(run.throughput_before > 0)) {
    return absl::StrFormat("the fault fired at %.1f s, while the sink's throughput was still 0",
                           fault);
  }
  return "";
}

void MarkNotTested(RunResult& run) {
  run.not_tested_reason = NotTestedReason(run);
  run.not_tested = !run.not_tested_reason.empty();
}

int64_t ReplayBound(const RunResult& run) {
  if (run.samples.empty()) return -1;
  const double from = run.fault_start_s.value_or(-1e300);
  int64_t bound = 0;
  int64_t committed = 0;  // the last readable commit at an earlier sample
  for (const Sample& x : run.samples) {
    if (x.t_s >= from) bound = std::max(bound, x.log_end - committed);
    if (x.committed >= 0) committed = std::max(committed, x.committed);
  }
  return bound;
}

std::vector<BoundCheck> DeliveryBounds(const RunResult& run) {
  std::vector<BoundCheck> out;
  auto exact = [&](std::string figure, int64_t value, int64_t bound) {
    out.push_back(
        {std::move(figure), absl::StrCat(value), absl::StrCat("= ", bound), value == bound});
  };
  exact("lost", run.lost, run.expected_loss);
  if (run.guarantee == "at-most-once") {
    exact("duplicated", run.duplicated, 0);
  } else {
    const int64_t bound = ReplayBound(run);
    out.push_back({"duplicated", absl::StrCat(run.duplicated), absl::StrCat("<= ", bound),
                   bound >= 0 && run.duplicated <= bound});
  }
  if (run.dedup_sink.has_value()) {
    exact("effectively-once lost", run.dedup_sink->lost, run.dedup_sink->expected_loss);
    exact("effectively-once duplicated", run.dedup_sink->duplicated, 0);
  }
  exact("zombie commits", run.zombie_commits, 0);
  return out;
}

std::vector<std::string> ViolationsNotReportedElsewhere(const RunResult& run,
                                                        const std::vector<BoundCheck>& checks) {
  std::vector<std::string> v;
  for (const BoundCheck& b : checks) {
    if (b.pass) continue;
    const bool reported = b.figure == "zombie commits" ||
                          b.figure.rfind("effectively-once", 0) == 0 ||
                          (b.figure == "lost" && run.guarantee == "at-least-once") ||
                          (b.figure == "duplicated" && run.guarantee == "at-most-once");
    if (!reported) v.push_back(absl::StrCat(b.figure, " ", b.value, ", bound ", b.bound));
  }
  return v;
}

namespace {

// Sections of docs/study-guide.md ("The why column") by mechanism.
constexpr char kGuideReplay[] = "replay-from-the-last-commit";
constexpr char kGuideTimeout[] = "failed-or-timed-out-tuples-replayed";
constexpr char kGuideCommittedAhead[] = "committed-before-processed";
constexpr char kGuideFailedNoReplay[] = "failed-records-without-replay";
constexpr char kGuideRetention[] = "retention-deleted-the-records";
constexpr char kGuideNothing[] = "nothing-lost-or-duplicated";
constexpr char kGuideNotTested[] = "not-tested";
constexpr char kGuideBroken[] = "a-broken-promise";

std::optional<FaultKind> KindOf(const RunResult& run) {
  absl::StatusOr<FaultKind> k = ParseFaultKind(run.fault);
  if (!k.ok()) return std::nullopt;
  return *k;
}

// What made the spout re-read from its last commit, as the start of a
// sentence that goes on "..., so it re-read from ...".
std::string ReplayCause(std::optional<FaultKind> kind) {
  if (!kind.has_value()) return "the spout started again after the fault";
  switch (*kind) {
    case FaultKind::kKillWorker:
      return "the spout's worker was killed and started again";
    case FaultKind::kPauseWorker:
      return "the frozen spout's ZooKeeper session expired while it was stopped";
    case FaultKind::kKillSupervisor:
      return "the spout's supervisor died and its spout was moved";
    case FaultKind::kKillNimbus:
      return "the spout started again after nimbus died";
    case FaultKind::kZkSessionExpiry:
      return "the spout's session expired";
    case FaultKind::kKillZkLeader:
      return "the spout lost its ZooKeeper session when the leader died";
    case FaultKind::kZkQuorumLoss:
      return "the spout's session was declared lost while ZooKeeper had no quorum";
    case FaultKind::kKafkaBrokerDown:
      return "the spout started again after the broker outage";
    case FaultKind::kRetention:
      return "the topologies were killed and resubmitted";
    case FaultKind::kBoltFailures:
      return "the spout replayed the records the transform failed";
    case FaultKind::kSlowBolt:
      return "the spout's tuples timed out behind the slow transform";
    case FaultKind::kRestartTopology:
      return "the topology was killed and submitted again";
    case FaultKind::kZkOverload:
      return "the spout's ZooKeeper writes waited so long that its tuples or session timed out";
    case FaultKind::kZkAclRevoked:
      return "the spout's commits were refused while the ACL was revoked";
    case FaultKind::kZkMisconfigured:
      return "the topologies were killed and submitted again with another zkServers";
    case FaultKind::kRebalance:
      return "the rebalance regrouped the transform's executors; had its worker restarted "
             "instead of regrouping in place, the trees that crossed it failed (and the spout "
             "restarted if it ran there)";
    case FaultKind::kUpgrade:
      return "the upgrade stopped the old topology, whose trees still in flight after the kill "
             "wait were not committed";
    case FaultKind::kPartitionWorkerPair:
      return "the tuple trees crossing the cut between two workers timed out";
    case FaultKind::kPartitionSpoutZk:
      return "the spout cut from ZooKeeper gave up its partitions when its session ran out";
    case FaultKind::kPartitionSupervisorHost:
      return "the spout's host was cut off and its partitions were moved to another host";
    case FaultKind::kPartitionNimbusLeader:
      return "the spout started again while the nimbus leader was cut off";
    case FaultKind::kPartitionZkMinority:
      return "the spout's ZooKeeper member lost its quorum and dropped its session";
    case FaultKind::kLossyNetwork:
      return "tuples dropped on the lossy host timed out";
  }
  return "the spout started again after the fault";
}

// What happened to the records in flight, for a loss sentence ("... in
// flight when <this> were lost").
std::string InFlightCause(std::optional<FaultKind> kind) {
  if (!kind.has_value()) return "the fault hit";
  switch (*kind) {
    case FaultKind::kKillWorker:
      return "the spout's worker was killed";
    case FaultKind::kPauseWorker:
      return "the spout's worker froze";
    case FaultKind::kKillSupervisor:
      return "the supervisor and its workers died";
    case FaultKind::kKillNimbus:
      return "nimbus died";
    case FaultKind::kZkSessionExpiry:
      return "the spout's ZooKeeper connections were cut";
    case FaultKind::kKillZkLeader:
      return "the ZooKeeper leader died";
    case FaultKind::kZkQuorumLoss:
      return "ZooKeeper lost its quorum";
    case FaultKind::kKafkaBrokerDown:
      return "the Kafka broker went down";
    case FaultKind::kRetention:
      return "the topologies were killed";
    case FaultKind::kBoltFailures:
      return "the transform failed records";
    case FaultKind::kSlowBolt:
      return "the transform was slow";
    case FaultKind::kRestartTopology:
      return "the topologies were killed";
    case FaultKind::kZkOverload:
      return "ZooKeeper was overloaded";
    case FaultKind::kZkAclRevoked:
      return "the ACL was revoked";
    case FaultKind::kZkMisconfigured:
      return "the topologies were killed";
    case FaultKind::kRebalance:
      return "the transform was rebalanced";
    case FaultKind::kUpgrade:
      return "the old topology was stopped";
    case FaultKind::kPartitionWorkerPair:
      return "two workers were cut from each other";
    case FaultKind::kPartitionSpoutZk:
      return "the spout's host was cut from ZooKeeper";
    case FaultKind::kPartitionSupervisorHost:
      return "the spout's host was cut off";
    case FaultKind::kPartitionNimbusLeader:
      return "the nimbus leader was cut off";
    case FaultKind::kPartitionZkMinority:
      return "a ZooKeeper member was cut off";
    case FaultKind::kLossyNetwork:
      return "the host dropped packets";
  }
  return "the fault hit";
}

std::string Records(int64_t n) { return absl::StrCat(n, n == 1 ? " record" : " records"); }

// The loss clauses: what the fault destroyed on purpose first, then the rest.
void ExplainLoss(const RunResult& run, std::optional<FaultKind> kind,
                 std::vector<std::string>& clauses, Explanation& e) {
  const int64_t expected = std::min(run.expected_loss, run.lost);
  const int64_t unexpected = run.lost - expected;
  if (expected > 0) {
    clauses.push_back(absl::StrCat(
        "retention deleted ", Records(run.expected_loss),
        " before this pipeline read them and the spout continued at the log start, so the loss "
        "is bounded by that deleted range (",
        run.expected_loss, ")"));
    e.guide_sections.push_back(kGuideRetention);
  }
  if (unexpected > 0) {
    if (run.guarantee == "at-least-once") {
      clauses.push_back(absl::StrCat("at-least-once lost ", Records(unexpected),
                                     expected > 0 ? " beyond the deleted range" : "",
                                     ", which it must never do (see Violations)"));
      e.guide_sections.push_back(kGuideBroken);
    } else {
      const std::string how =
          kind == FaultKind::kBoltFailures
              ? absl::StrCat("the transform failed records while the fault lasted and ",
                             run.guarantee, " does not replay a failure, so ", Records(unexpected),
                             " were lost")
              : absl::StrCat(run.guarantee,
                             run.guarantee == "at-most-once"
                                 ? " commits each offset before it emits the record"
                                 : " commits what it emitted without waiting for acks",
                             ", so the ", Records(unexpected), " in flight when ",
                             InFlightCause(kind), " were lost");
      std::string bound = absl::StrCat(
          "the loss is bounded by the offsets committed but never "
          "received (",
          run.committed_not_processed, ")");
      if (unexpected > run.committed_not_processed) {
        absl::StrAppend(&bound, "; ", unexpected - run.committed_not_processed,
                        " were never committed, as the run had not settled");
      }
      clauses.push_back(absl::StrCat(how, "; ", bound));
      e.guide_sections.push_back(kind == FaultKind::kBoltFailures ? kGuideFailedNoReplay
                                                                  : kGuideCommittedAhead);
    }
  }
}

void ExplainDuplication(const RunResult& run, std::optional<FaultKind> kind,
                        std::vector<std::string>& clauses, Explanation& e) {
  if (run.duplicated <= 0) return;
  if (run.guarantee == "at-most-once") {
    clauses.push_back(absl::StrCat("at-most-once delivered ", run.duplicated,
                                   " extra copies, which it must never do (see Violations)"));
    e.guide_sections.push_back(kGuideBroken);
  } else {
    const int64_t bound = ReplayBound(run);
    // Failed or timed-out tuples are replayed one by one from above the
    // commit; every other fault makes the spout start over from it.
    const bool one_by_one = kind == FaultKind::kSlowBolt || kind == FaultKind::kBoltFailures;
    std::string how =
        kind == FaultKind::kSlowBolt
            ? absl::StrCat(ReplayCause(kind),
                           ", so it replayed them while the originals were still on their way")
        : kind == FaultKind::kBoltFailures ? ReplayCause(kind)
        : kind == FaultKind::kRebalance
            ? absl::StrCat(ReplayCause(kind),
                           ", so the spout replayed what it had read above its last commit")
            : absl::StrCat(ReplayCause(kind),
                           kind == FaultKind::kUpgrade
                               ? ", so the copy's spout re-read from that last committed offset"
                               : ", so the spout re-read from its last committed offset");
    const std::string since = one_by_one ? "the records read above the committed offset"
                                         : "the records read since that commit";
    if (bound >= 0 && run.duplicated <= bound) {
      absl::StrAppend(&how, "; duplicates are bounded by ", since, " (", bound, ")");
    } else if (bound >= 0) {
      absl::StrAppend(&how, "; the ", run.duplicated, " duplicates exceed ", since, " (", bound,
                      "), so records were replayed more than once (at most ", run.max_copies,
                      " copies of one)");
    }
    clauses.push_back(std::move(how));
    e.guide_sections.push_back(one_by_one ? kGuideTimeout : kGuideReplay);
  }
}

}  // namespace

Explanation ExplainRun(const RunResult& run) {
  Explanation e;
  if (run.not_tested) {
    e.sentence = absl::StrCat("Not tested: ", run.not_tested_reason,
                              ", so this row shows nothing "
                              "about ",
                              run.guarantee, ".");
    e.guide_sections.push_back(kGuideNotTested);
    return e;
  }
  const std::optional<FaultKind> kind = KindOf(run);
  std::vector<std::string> clauses;

  ExplainLoss(run, kind, clauses, e);
  ExplainDuplication(run, kind, clauses, e);

  if (clauses.empty()) {
    e.sentence = "Nothing was lost or duplicated.";
    e.guide_sections.push_back(kGuideNothing);
    return e;
  }
  std::string sentence = absl::StrJoin(clauses, "; and ");
  sentence[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(sentence[0])));
  e.sentence = absl::StrCat(sentence, ".");
  return e;
}

}  // namespace tempest::study
