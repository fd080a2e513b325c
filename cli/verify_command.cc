// `tempest verify LOG... [--expected N] [--json] [--strict]`: the offline
// form of VerifierBolt's report, over one or more verifier logs (plain or
// dedup-mode lines, see bolts/verification_report.h).
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "bolts/verification_report.h"
#include "cli/cli_text.h"
#include "cli/commands.h"

namespace tempest::cli {
namespace {

struct VerifyArgs {
  std::vector<std::string> logs;
  int64_t expected = -1;
  bool json = false;
  bool strict = false;
};

int RunVerify(const VerifyArgs& args, const CLI::Option* expected_option) {
  std::optional<int64_t> expected;
  if (expected_option->count() > 0) {
    if (args.expected < 0) return Fail("--expected must be >= 0", 2);
    expected = args.expected;
  }
  absl::StatusOr<bolts::VerificationReport> report = bolts::VerifyLogs(args.logs, expected);
  if (!report.ok()) return Fail(std::string(report.status().message()), 1);
  if (args.json) {
    std::printf("%s\n", bolts::ReportToJson(*report).c_str());
  } else {
    std::fputs(bolts::ReportToText(*report).c_str(), stdout);
  }
  std::fflush(stdout);
  return args.strict && !report->Complete() ? 1 : 0;
}

}  // namespace

void RegisterVerifyCommand(CLI::App& app, CommandSet& set) {
  auto args = std::make_shared<VerifyArgs>();
  auto* sub = app.add_subcommand(
      "verify",
      "Report received/unique/missing/duplicated values of VerifierBolt logs (one integer per "
      "line, or a dedup sink's keyed lines, whose dropped replays count as deduplicated); "
      "malformed lines are counted");
  sub->add_option("logs", args->logs, "verifier log files (read together)")->required();
  CLI::Option* expected =
      sub->add_option("--expected", args->expected, "values should cover 0..N-1")
          ->check(Bounded(0, 1e18))
          ->default_str("");
  sub->add_flag("--json", args->json, "print one JSON document");
  sub->add_flag("--strict", args->strict,
                "exit 1 unless nothing is missing, unexpected or malformed");
  set.Add(sub, [args, expected] { return RunVerify(*args, expected); });
}

}  // namespace tempest::cli
