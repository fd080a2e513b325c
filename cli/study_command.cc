// `tempest study`: the fault-injection study of offset loss and duplication
// (docs/study-guide.md). Parses options, then study::RunStudy does the work
// and study::WriteReport writes results.json, report.md and the charts.
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "cli/cli_text.h"
#include "cli/commands.h"
#include "common/core/status_macros.h"
#include "common/os/files.h"
#include "study/report.h"
#include "study/report_markdown.h"
#include "study/results_json.h"
#include "study/scenario.h"
#include "study/study_runner.h"

namespace tempest::cli {
namespace {

struct StudyArgs {
  std::vector<std::string> scenarios;
  std::vector<std::string> guarantees;
  std::vector<std::string> scenario_files;
  int64_t records = 20'000;
  double rate = 2'000;
  uint64_t seed = 1;
  std::string out = "tempest-study";
  double settle_timeout_s = 90;
  bool list = false;
  bool report_only = false;
  bool hosts = false;
};

// The scenarios named on the command line ("all" or none: every known one
// of the chosen world, single-host or --hosts), from the built-ins and the
// user's files.
absl::StatusOr<std::vector<study::Scenario>> SelectScenarios(const StudyArgs& args) {
  std::vector<study::Scenario> known = study::DefaultScenarios(args.hosts);
  for (const std::string& file : args.scenario_files) {
    ASSIGN_OR_RETURN(const std::string text, os::ReadSmallFile(file));
    ASSIGN_OR_RETURN(std::vector<study::Scenario> parsed, study::ParseScenarios(text, file));
    for (study::Scenario& s : parsed) {
      // A user's scenario with a built-in name replaces the built-in.
      auto same = std::find_if(known.begin(), known.end(),
                               [&](const study::Scenario& k) { return k.name == s.name; });
      if (same != known.end()) {
        *same = std::move(s);
      } else {
        known.push_back(std::move(s));
      }
    }
  }
  const bool all = args.scenarios.empty() ||
                   std::find(args.scenarios.begin(), args.scenarios.end(), "all") !=
                       args.scenarios.end();
  if (all) {
    // A user's file may add scenarios of the other world; they run there.
    std::vector<study::Scenario> here;
    for (const study::Scenario& s : known) {
      if (study::NeedsHosts(s.fault) == args.hosts) here.push_back(s);
    }
    return here;
  }
  std::vector<study::Scenario> chosen;
  std::set<std::string> seen;
  for (const std::string& name : args.scenarios) {
    auto it = std::find_if(known.begin(), known.end(),
                           [&](const study::Scenario& k) { return k.name == name; });
    if (it == known.end()) {
      for (const study::Scenario& other : study::DefaultScenarios(!args.hosts)) {
        if (other.name == name) {
          return absl::InvalidArgumentError(
              args.hosts ? absl::StrCat("scenario '", name,
                                        "' runs on one host only; run it without --hosts")
                         : absl::StrCat("scenario '", name,
                                        "' is a partition scenario; it needs --hosts"));
        }
      }
      std::vector<std::string> names;
      for (const study::Scenario& k : known) names.push_back(k.name);
      return absl::InvalidArgumentError(absl::StrCat("unknown scenario '", name,
                                                     "' (known: ", absl::StrJoin(names, ", "),
                                                     ", all)"));
    }
    if (study::NeedsHosts(it->fault) != args.hosts) {
      return absl::InvalidArgumentError(absl::StrCat(
          "scenario '", name, "' (fault ", std::string(study::FaultKindName(it->fault)), ") ",
          args.hosts ? "runs on one host only; run it without --hosts" : "needs --hosts"));
    }
    if (seen.insert(name).second) chosen.push_back(*it);
  }
  return chosen;
}

absl::StatusOr<std::vector<std::string>> SelectGuarantees(const StudyArgs& args) {
  std::vector<std::string> all(std::begin(study::kGuarantees), std::end(study::kGuarantees));
  if (args.guarantees.empty()) return all;
  std::set<std::string> wanted;
  for (const std::string& g : args.guarantees) {
    if (g == "all") return all;
    if (std::find(all.begin(), all.end(), g) == all.end()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "unknown guarantee '", g, "' (at-least-once, at-most-once, no-guarantee, all)"));
    }
    wanted.insert(g);
  }
  std::vector<std::string> out;
  for (const std::string& g : all) {
    if (wanted.count(g) > 0) out.push_back(g);
  }
  return out;
}

// Redraws report.md and the charts from an earlier study's results.json.
int RedrawReport(const StudyArgs& args) {
  const std::string path = (std::filesystem::path(args.out) / "results.json").string();
  absl::StatusOr<std::string> text = os::ReadSmallFile(path, size_t{1} << 30);
  if (!text.ok()) return Fail(std::string(text.status().message()));
  absl::StatusOr<study::StudyResults> results = study::ResultsFromJson(*text);
  if (!results.ok()) return Fail(absl::StrCat(path, ": ", results.status().message()));
  absl::StatusOr<study::ReportFiles> files = study::WriteReport(*results, args.out);
  if (!files.ok()) return Fail(std::string(files.status().message()));
  std::printf("%s\n", files->report_md.c_str());
  if (!files->charts_error.empty()) return Fail(absl::StrCat("charts: ", files->charts_error));
  return 0;
}

// The study's options as the command line gives them; the caller adds where
// it writes, this binary and the stop check.
study::StudyOptions StudyOptionsOf(const StudyArgs& args, std::vector<study::Scenario> scenarios,
                                   std::vector<std::string> guarantees) {
  study::StudyOptions options;
  options.scenarios = std::move(scenarios);
  options.guarantees = std::move(guarantees);
  options.records = args.records;
  options.rate = args.rate;
  options.seed = args.seed;
  options.settle_timeout_s = args.settle_timeout_s;
  options.hosts = args.hosts;
  return options;
}

// Why a study that ran to the end failed: its broken expectations and the
// runs that tested nothing.
std::string VerdictFailure(const study::Verdict& verdict, const std::string& report_md) {
  std::vector<std::string> why;
  if (verdict.violations > 0) {
    why.push_back(absl::StrCat(verdict.violations, " expectation(s) broken"));
  }
  if (verdict.not_tested > 0) {
    why.push_back(absl::StrCat(verdict.not_tested,
                               " run(s) not tested (the fault fired before records flowed, or "
                               "nothing was measured)"));
  }
  if (why.empty()) why.push_back("no runs");
  return absl::StrCat(absl::StrJoin(why, " and "), "; see ", report_md);
}

int RunStudyCommand(const StudyArgs& args) {
  if (args.report_only) return RedrawReport(args);
  absl::StatusOr<std::vector<study::Scenario>> scenarios = SelectScenarios(args);
  if (!scenarios.ok()) return Fail(std::string(scenarios.status().message()), 2);
  if (args.list) {
    for (const study::Scenario& s : *scenarios) {
      std::printf("%-24s %-18s %s\n", s.name.c_str(),
                  std::string(study::FaultKindName(s.fault)).c_str(), s.description.c_str());
    }
    return 0;
  }
  absl::StatusOr<std::vector<std::string>> guarantees = SelectGuarantees(args);
  if (!guarantees.ok()) return Fail(std::string(guarantees.status().message()), 2);

  for (char c : args.out) {
    if (static_cast<unsigned char>(c) < 0x20) return Fail("--out must not contain control characters", 2);
  }
  BlockStopSignals();
  study::StudyOptions options = StudyOptionsOf(args, *std::move(scenarios), *std::move(guarantees));
  std::error_code ec;
  options.out_dir = std::filesystem::absolute(args.out, ec).string();
  std::filesystem::create_directories(options.out_dir, ec);
  if (ec) return Fail(absl::StrCat("cannot create ", options.out_dir, ": ", ec.message()));
  options.binary = std::filesystem::read_symlink("/proc/self/exe", ec).string();
  if (ec) return Fail(absl::StrCat("cannot find this binary: ", ec.message()));
  auto stopped = std::make_shared<bool>(false);
  options.stop_requested = [stopped] {
    if (!*stopped && WaitStopSignalFor(std::chrono::milliseconds(0)) != 0) *stopped = true;
    return *stopped;
  };

  std::fprintf(stderr,
               "tempest: study of %zu scenario(s) x %zu guarantee(s), %lld records at %.0f/s, "
               "seed %llu; writing to %s\n",
               options.scenarios.size(), options.guarantees.size(),
               static_cast<long long>(options.records), options.rate,
               static_cast<unsigned long long>(options.seed), options.out_dir.c_str());
  study::StudyProgress progress(stderr);
  absl::StatusOr<study::StudyResults> results = study::RunStudy(options, progress);
  if (!results.ok()) return Fail(std::string(results.status().message()));
  absl::StatusOr<study::ReportFiles> files = study::WriteReport(*results, options.out_dir);
  if (!files.ok()) return Fail(std::string(files.status().message()));
  progress.Line(absl::StrCat("report: ", files->report_md));
  progress.Line(absl::StrCat("results: ", files->results_json));
  if (!files->charts_error.empty()) {
    progress.Line(absl::StrCat("charts not drawn: ", files->charts_error));
  }
  const study::Verdict verdict = study::VerdictOf(*results);
  if (*stopped) return Fail("stopped before every scenario ran; the report covers what ran");
  if (!verdict.passed()) return Fail(VerdictFailure(verdict, files->report_md));
  return 0;
}

}  // namespace

void RegisterStudyCommand(CLI::App& app, CommandSet& set) {
  auto args = std::make_shared<StudyArgs>();
  CLI::App* sub = app.add_subcommand(
      "study",
      "Run fault-injection scenarios against a private local cluster and report lost and "
      "duplicated records per delivery guarantee (docs/study-guide.md)");
  std::string names;
  for (const study::Scenario& s : study::DefaultScenarios(/*hosts=*/false)) {
    absl::StrAppend(&names, names.empty() ? "" : ", ", s.name);
  }
  sub->add_option("--scenario", args->scenarios,
                  absl::StrCat("a scenario to run (repeatable; 'all' or none: every scenario); "
                               "built in: ",
                               names, "; --list-scenarios describes them"));
  sub->add_option("--guarantee", args->guarantees,
                  "at-least-once, at-most-once, no-guarantee or all (repeatable; default all)");
  sub->add_option("--scenario-file", args->scenario_files,
                  "YAML file of more scenarios (repeatable; see docs/study-guide.md)");
  // The dev Kafka cluster keeps about 5 MiB per partition: more records than
  // that would let retention delete unread records in every scenario.
  sub->add_option("--records", args->records, "records produced per scenario (100..200000)")
      ->check(Bounded(100, 200'000));
  sub->add_option("--rate", args->rate, "records produced per second")
      ->check(Bounded(1, 1'000'000));
  sub->add_option("--seed", args->seed, "seed of fault timing and target choice")
      ->check(Bounded(0, 1e18));
  sub->add_option("--out", args->out, "directory for results.json, report.md, charts and logs");
  sub->add_option("--settle-timeout", args->settle_timeout_s,
                  "seconds a scenario may take to settle after production and its fault end")
      ->check(Bounded(5, 3600));
  sub->add_flag("--hosts", args->hosts,
                "run on several hosts (network namespaces; needs root, iproute2 and nftables) "
                "and run the partition scenarios: partition-worker-pair, partition-spout-zk, "
                "partition-supervisor-host, partition-nimbus-leader, partition-zk-minority, "
                "lossy-network");
  sub->add_flag("--list-scenarios", args->list, "print the scenarios and exit");
  sub->add_flag("--report-only", args->report_only,
                "redraw report.md and the charts from --out's results.json; run nothing");
  set.Add(sub, [args] { return RunStudyCommand(*args); });
}

}  // namespace tempest::cli
