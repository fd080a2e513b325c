#include "study/study_runner.h"

#include <stdlib.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <memory>

#include "absl/strings/str_cat.h"
#include "common/coord/zk_session.h"
#include "common/core/status_macros.h"
#include "common/os/privileges.h"
#include "study/run_analysis.h"
#include "study/scenario_run.h"
#include "study/study_world.h"
#include "supervisor/supervisor_options.h"

namespace tempest::study {
namespace {

using SteadyClock = std::chrono::steady_clock;

std::string NowIso8601() {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buf[32];
  std::strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

// Under root the topologies' workers run as slot accounts in the group of
// supervisor.worker.user and open their sinks by absolute name. When --out
// lies beyond a directory those accounts may not search (root's home), the
// study makes them a folder of their own in the temp directory instead of
// opening the user's directories, and each scenario copies its files home
// (ScenarioRun). Returns that folder, or "" when --out is reachable.
absl::StatusOr<std::string> WorkerOutDir(const StudyOptions& options, StudyProgress& progress) {
  if (!os::RunningAsRoot()) return std::string();
  ASSIGN_OR_RETURN(const os::UnixUser account,
                   os::LookUpUnprivilegedUser(supervisor::kDefaultWorkerUser));
  const std::optional<std::string> closed = os::FirstDirClosedTo(options.out_dir, account);
  if (!closed.has_value()) return std::string();
  const std::optional<std::string> parent = os::TempParentReachableBy(account);
  if (!parent.has_value()) {
    return absl::FailedPreconditionError(
        absl::StrCat("the workers (", account.name,
                     "'s group and slot accounts) can reach neither --out (", *closed,
                     " is private) nor a temp directory (TMPDIR, /tmp, /var/tmp); set TMPDIR to a "
                     "directory they can pass through"));
  }
  std::string pattern = (std::filesystem::path(*parent) / "tempest-study-XXXXXX").string();
  if (::mkdtemp(pattern.data()) == nullptr) {
    return absl::InternalError(absl::StrCat("cannot create a folder in ", *parent));
  }
  std::error_code ec;
  // Searchable, not listable: each pipeline's folder inside is the workers'.
  std::filesystem::permissions(pattern, std::filesystem::perms::owner_all |
                                            std::filesystem::perms::group_exec |
                                            std::filesystem::perms::others_exec, ec);
  progress.Line(absl::StrCat("workers cannot pass through ", *closed, ": topologies write to ",
                             pattern, ", copied into ", options.out_dir,
                             " after each scenario"));
  return pattern;
}

// Rows for a scenario that produced no figures, one per guarantee, so the
// report shows it as not run instead of leaving it out.
void AddUnrunScenario(const StudyOptions& options, const Scenario& scenario,
                      const std::string& why, StudyResults& results) {
  for (const std::string& g : options.guarantees) {
    RunResult r;
    r.scenario = scenario.name;
    r.guarantee = g;
    r.fault = std::string(FaultKindName(scenario.fault));
    r.records = options.records;
    r.quiesced = false;
    r.violations.push_back(why);
    MarkNotTested(r);
    results.runs.push_back(std::move(r));
  }
}

// The progress line that sums up one run.
std::string RunLine(const RunResult& r) {
  return absl::StrCat(
      r.scenario, " ", r.guarantee, ": lost ", r.lost, ", duplicated ", r.duplicated,
      r.dedup_sink.has_value() ? absl::StrCat(" (effectively-once sink: lost ", r.dedup_sink->lost,
                                              ", duplicated ", r.dedup_sink->duplicated, ")")
                               : "",
      r.rebalance.has_value()
          ? absl::StrCat("; workers restarted ", r.rebalance->restarted, ", kept ",
                         r.rebalance->kept, " of ", r.rebalance->workers_before)
          : "",
      r.violations.empty() ? "" : absl::StrCat("; ", r.violations.size(), " violation(s)"),
      r.not_tested ? absl::StrCat("; not tested: ", r.not_tested_reason) : "");
}

// Runs the scenarios one after another into `results`; the error that broke
// the world, which ends the study early.
absl::Status RunScenarios(StudyWorld& world, const StudyOptions& options, StudyProgress& progress,
                          StudyResults& results) {
  for (size_t i = 0; i < options.scenarios.size(); ++i) {
    const Scenario& scenario = options.scenarios[i];
    progress.StartScenario(static_cast<int>(i + 1), static_cast<int>(options.scenarios.size()),
                           scenario.name);
    if (NeedsHosts(scenario.fault) != options.hosts) {
      const std::string why =
          options.hosts ? "not run: it needs the single-host world (run it without --hosts)"
                        : "not run: a partition scenario needs the multi-host world (--hosts)";
      AddUnrunScenario(options, scenario, why, results);
      progress.Line(absl::StrCat(scenario.name, ": ", why));
      continue;
    }
    ScenarioRun run(world, options, scenario, progress);
    absl::StatusOr<std::vector<RunResult>> runs = run.Run();
    if (!run.world_broken().ok()) {
      if (runs.ok()) results.runs.insert(results.runs.end(), runs->begin(), runs->end());
      progress.Line(std::string(run.world_broken().message()));
      return run.world_broken();
    }
    if (!runs.ok()) {
      if (absl::IsCancelled(runs.status())) return absl::OkStatus();
      // One broken scenario is reported; the study goes on.
      AddUnrunScenario(options, scenario,
                       absl::StrCat("the scenario could not run: ", runs.status().message()),
                       results);
      progress.Line(absl::StrCat(scenario.name, ": could not run: ", runs.status().message()));
      continue;
    }
    for (RunResult& r : *runs) {
      progress.Line(RunLine(r));
      results.runs.push_back(std::move(r));
    }
  }
  return absl::OkStatus();
}

// RunStudy once the options are complete (StudyOptions::worker_out_dir).
absl::StatusOr<StudyResults> RunStudyWith(const StudyOptions& options, StudyProgress& progress) {
  if (options.scenarios.empty()) return absl::InvalidArgumentError("no scenarios to run");
  if (options.guarantees.empty()) return absl::InvalidArgumentError("no guarantees to run");
  if (options.records < options.partitions) {
    return absl::InvalidArgumentError(
        absl::StrCat("--records must be at least ", options.partitions));
  }
  if (!(options.rate > 0)) return absl::InvalidArgumentError("--rate must be positive");
  const auto started = SteadyClock::now();
  StudyResults results;
  results.seed = options.seed;
  results.records = options.records;
  results.rate = options.rate;
  results.started_at = NowIso8601();

  progress.StartScenario(0, static_cast<int>(options.scenarios.size()), "world");
  StudyWorld::Options wo;
  wo.dir = (std::filesystem::path(options.out_dir) / "world").string();
  wo.binary = options.binary;
  wo.stop_requested = options.stop_requested;
  if (options.hosts) {
    // Three supervisor hosts with room for a cut-off host's workers.
    wo.hosts = true;
    wo.supervisors = 3;
    wo.slots_per_supervisor = 4;
    progress.Phase(
        "starting 9 hosts: ZooKeeper (3 members), 2 nimbuses, 3 supervisors, Kafka on the client");
  } else {
    progress.Phase("starting ZooKeeper (3 servers), Kafka, nimbus and 2 supervisors");
  }
  ASSIGN_OR_RETURN(std::unique_ptr<StudyWorld> world, StudyWorld::Start(wo));
  // This process's ZooKeeper clients complain loudly during the faults the
  // study injects on purpose; their lines go to a log, not the progress.
  std::FILE* zk_log =
      std::fopen((std::filesystem::path(wo.dir) / "logs" / "study-zk-client.log").c_str(), "a");
  if (zk_log != nullptr) coord::SetZkClientLogStream(zk_log);

  const absl::Status broken = RunScenarios(*world, options, progress, results);
  if (!broken.ok()) {
    // The scenarios after the breakage are reported as not run, not as lost.
    for (const Scenario& scenario : options.scenarios) {
      const bool ran = std::any_of(results.runs.begin(), results.runs.end(),
                                   [&](const RunResult& r) { return r.scenario == scenario.name; });
      if (!ran) {
        AddUnrunScenario(options, scenario, absl::StrCat("not run: ", broken.message()), results);
      }
    }
  }
  const double duration_s = std::chrono::duration<double>(SteadyClock::now() - started).count();
  results.duration_s = std::round(duration_s * 10) / 10;
  world.reset();
  if (zk_log != nullptr) {
    coord::SetZkClientLogStream(nullptr);
    std::fclose(zk_log);
  }
  return results;
}

}  // namespace

absl::StatusOr<StudyResults> RunStudy(const StudyOptions& requested, StudyProgress& progress) {
  StudyOptions options = requested;
  ASSIGN_OR_RETURN(options.worker_out_dir, WorkerOutDir(options, progress));
  absl::StatusOr<StudyResults> results = RunStudyWith(options, progress);
  std::error_code ec;
  if (!options.worker_out_dir.empty()) std::filesystem::remove_all(options.worker_out_dir, ec);
  return results;
}

}  // namespace tempest::study
