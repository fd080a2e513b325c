#include "study/rebalance_run.h"

#include <algorithm>
#include <set>
#include <thread>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/core/status_macros.h"
#include "study/run_analysis.h"
#include "study/scenario.h"

namespace tempest::study {
namespace {

int64_t HighestVersion(const std::vector<StudyWorld::Worker>& workers) {
  int64_t v = 0;
  for (const StudyWorld::Worker& w : workers) v = std::max(v, w.assignment_version);
  return v;
}

// Every one of `expected` workers beats with a version above `version`.
bool RunsNewerThan(const std::vector<StudyWorld::Worker>& workers, size_t expected,
                   int64_t version) {
  if (workers.size() != expected) return false;
  return std::all_of(workers.begin(), workers.end(),
                     [&](const StudyWorld::Worker& w) { return w.assignment_version > version; });
}

}  // namespace

PipelineRebalancer::PipelineRebalancer(StudyWorld& world, std::vector<std::string> topologies,
                                       std::function<double()> now)
    : world_(world), topologies_(std::move(topologies)), now_(std::move(now)) {}

std::vector<StudyWorld::Worker> PipelineRebalancer::WorkersOf(
    const std::vector<StudyWorld::Worker>& all, const std::string& topology) const {
  std::vector<StudyWorld::Worker> out;
  for (const StudyWorld::Worker& w : all) {
    if (w.topology_id.rfind(topology + "-", 0) == 0) out.push_back(w);
  }
  return out;
}

absl::Status PipelineRebalancer::Rebalance(int executors, std::chrono::seconds timeout,
                                           const std::function<bool()>& stop) {
  const std::vector<StudyWorld::Worker> before = world_.Workers();
  if (first_.empty()) first_ = before;
  const double started = now_();
  moved_at_s_.push_back(started);
  std::vector<StudyWorld::Command> commands;
  for (const std::string& name : topologies_) {
    ASSIGN_OR_RETURN(StudyWorld::Command c,
                     world_.StartTempest({"rebalance", name, "-w", "0", "-e",
                                          absl::StrCat(kRebalancedBolt, "=", executors)}));
    commands.push_back(std::move(c));
  }
  absl::Status first_error = absl::OkStatus();
  for (StudyWorld::Command& c : commands) {
    absl::StatusOr<std::string> out = world_.Finish(c, std::chrono::seconds(120));
    if (!out.ok() && first_error.ok()) first_error = out.status();
  }
  RETURN_IF_ERROR(first_error);
  // Settled: as many workers as before, every one running a newer version
  // (a restarted worker beats only once it runs the new assignment).
  std::set<std::string> waiting(topologies_.begin(), topologies_.end());
  const auto until = std::chrono::steady_clock::now() + timeout;
  while (!waiting.empty() && std::chrono::steady_clock::now() < until && !stop()) {
    const std::vector<StudyWorld::Worker> now = world_.Workers();
    for (auto it = waiting.begin(); it != waiting.end();) {
      const std::vector<StudyWorld::Worker> was = WorkersOf(before, *it);
      if (RunsNewerThan(WorkersOf(now, *it), was.size(), HighestVersion(was))) {
        settle_s_[*it].push_back(now_() - started);
        it = waiting.erase(it);
      } else {
        ++it;
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return absl::OkStatus();
}

RebalanceFigures PipelineRebalancer::Figures(const std::string& topology) const {
  RebalanceFigures f;
  const std::vector<StudyWorld::Worker> was = WorkersOf(first_, topology);
  const std::vector<StudyWorld::Worker> now = WorkersOf(world_.Workers(), topology);
  f.workers_before = static_cast<int64_t>(was.size());
  for (const StudyWorld::Worker& w : was) {
    const bool same = std::any_of(now.begin(), now.end(), [&](const StudyWorld::Worker& n) {
      return n.pid == w.pid && n.supervisor == w.supervisor && n.port == w.port;
    });
    ++(same ? f.kept : f.restarted);
  }
  f.moved_at_s = moved_at_s_;
  if (auto it = settle_s_.find(topology); it != settle_s_.end()) {
    f.settle_s = it->second;
    f.applied = static_cast<int64_t>(it->second.size());
  }
  return f;
}

std::optional<double> LongestOutputGap(const std::vector<Sample>& samples, double from_s,
                                       double to_s) {
  if (samples.empty()) return std::nullopt;
  double gap = 0;
  double last_rise = samples.front().t_s;
  int64_t received = samples.front().sink_received;
  bool waited = false;  // at the previous sample, produced records were missing at the sink
  for (const Sample& x : samples) {
    const int64_t have = x.sink_distinct >= 0 ? x.sink_distinct : x.sink_received;
    if (x.sink_received > received) {
      if (waited && x.t_s >= from_s && x.t_s < to_s) gap = std::max(gap, x.t_s - last_rise);
      last_rise = x.t_s;
    } else if (have >= x.log_end) {
      last_rise = x.t_s;  // nothing to receive is no gap
    }
    received = x.sink_received;
    waited = have < x.log_end;
  }
  if (waited && samples.back().t_s >= from_s && samples.back().t_s < to_s) {
    gap = std::max(gap, samples.back().t_s - last_rise);
  }
  return gap;
}

void FillOutputGaps(const std::vector<Sample>& samples, RebalanceFigures& f) {
  f.gaps_s.clear();
  f.output_gap_s.reset();
  if (samples.empty() || f.moved_at_s.empty()) return;
  for (size_t i = 0; i < f.moved_at_s.size(); ++i) {
    const double to =
        i + 1 < f.moved_at_s.size() ? f.moved_at_s[i + 1] : std::numeric_limits<double>::infinity();
    f.gaps_s.push_back(LongestOutputGap(samples, f.moved_at_s[i], to).value_or(0));
  }
  f.output_gap_s = LongestOutputGap(samples, f.moved_at_s.front());
}

std::vector<BoundCheck> CheckRebalanceBounds(const RunResult& run) {
  std::vector<BoundCheck> out = DeliveryBounds(run);
  auto exact = [&](std::string figure, int64_t value, int64_t bound) {
    out.push_back(
        {std::move(figure), absl::StrCat(value), absl::StrCat("= ", bound), value == bound});
  };
  const RebalanceFigures f = run.rebalance.value_or(RebalanceFigures{});
  exact("rebalances applied", f.applied, 2);
  // The transform's tasks stay in their worker, which regroups them in
  // place: no worker process restarts for either move.
  out.push_back({"workers kept", absl::StrCat(f.kept, " of ", f.workers_before), "all",
                 f.workers_before > 0 && f.kept == f.workers_before});
  out.push_back({"workers restarted", absl::StrCat(f.restarted, " of ", f.workers_before), "= 0",
                 f.restarted == 0});
  std::string settle;
  for (double s : f.settle_s)
    absl::StrAppend(&settle, settle.empty() ? "" : ", ", absl::StrFormat("%.1f", s));
  out.push_back({"settle (s)", settle.empty() ? "n/a" : settle, "none", true});
  std::string gaps;
  for (double g : f.gaps_s) {
    absl::StrAppend(&gaps, gaps.empty() ? "" : ", ", absl::StrFormat("%.1f", g));
  }
  out.push_back({"output gap per rebalance (s)", gaps.empty() ? "n/a" : gaps, "none", true});
  out.push_back({"longest output gap (s)",
                 f.output_gap_s.has_value() ? absl::StrFormat("%.1f", *f.output_gap_s) : "n/a",
                 "none", true});
  return out;
}

std::vector<std::string> RebalanceViolations(const RunResult& run) {
  return ViolationsNotReportedElsewhere(run, CheckRebalanceBounds(run));
}

}  // namespace tempest::study
