#include "study/upgrade_run.h"

#include <fstream>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/core/status_macros.h"
#include "study/run_analysis.h"
#include "study/scenario.h"

namespace tempest::study {
namespace {

// The number right after `label` in `line` ("output gap 12.5 s": 12.5).
std::optional<double> NumberAfter(const std::string& line, const std::string& label) {
  const size_t at = line.find(label);
  if (at == std::string::npos) return std::nullopt;
  const size_t start = at + label.size();
  const size_t end = line.find(' ', start);
  double v = 0;
  if (!absl::SimpleAtod(line.substr(start, end - start), &v)) return std::nullopt;
  return v;
}

std::string Seconds(const std::optional<double>& s) {
  return s.has_value() ? absl::StrFormat("%.1f", *s) : "n/a";
}

}  // namespace

PipelineUpgrader::PipelineUpgrader(StudyWorld& world, std::vector<Target> targets,
                                   std::function<double()> now)
    : world_(world), targets_(std::move(targets)), now_(std::move(now)) {}

absl::Status PipelineUpgrader::Upgrade(std::chrono::seconds timeout) {
  const double started = now_();
  std::vector<StudyWorld::Command> commands;
  for (const Target& t : targets_) {
    figures_[t.name].at_s = started;
    ASSIGN_OR_RETURN(StudyWorld::Command c,
                     world_.StartTempest({"upgrade", t.name, t.copy_yaml, "--wait",
                                          absl::StrCat(kUpgradeWaitSecs)}));
    commands.push_back(std::move(c));
  }
  absl::Status first_error = absl::OkStatus();
  for (size_t i = 0; i < commands.size(); ++i) {
    absl::StatusOr<std::string> out = world_.Finish(commands[i], timeout);
    UpgradeFigures& f = figures_[targets_[i].name];
    f.took_s = now_() - started;
    if (!out.ok()) {
      if (first_error.ok()) {
        first_error = absl::Status(
            out.status().code(),
            absl::StrCat("tempest upgrade ", targets_[i].name, ": ", out.status().message()));
      }
      continue;
    }
    f.applied = 1;
    ParseUpgradeOutput(*out, f);
  }
  return first_error;
}

UpgradeFigures PipelineUpgrader::Figures(const std::string& name) const {
  auto it = figures_.find(name);
  return it == figures_.end() ? UpgradeFigures{} : it->second;
}

absl::StatusOr<std::string> WriteUpgradeCopy(const PipelineSpec& spec,
                                             const std::string& yaml_path) {
  PipelineSpec copy = spec;
  copy.spout_id = spec.name;
  copy.name = spec.name + kUpgradedSuffix;
  const std::string path = yaml_path.substr(0, yaml_path.rfind('.')) + "-copy.yaml";
  std::ofstream file(path);
  file << PipelineTopologyYaml(copy);
  if (!file) return absl::InternalError(absl::StrCat("cannot write ", path));
  return path;
}

void ParseUpgradeOutput(const std::string& out, UpgradeFigures& f) {
  const size_t at = out.find("upgrade 5/5: ");
  if (at == std::string::npos) return;
  const std::string line = out.substr(at, out.find('\n', at) - at);
  f.command_gap_s = NumberAfter(line, "output gap ");
  f.drain_s = NumberAfter(line, "drain ");
}

std::vector<BoundCheck> CheckUpgradeBounds(const RunResult& run) {
  std::vector<BoundCheck> out = DeliveryBounds(run);
  auto exact = [&](std::string figure, int64_t value, int64_t bound) {
    out.push_back(
        {std::move(figure), absl::StrCat(value), absl::StrCat("= ", bound), value == bound});
  };
  const UpgradeFigures f = run.upgrade.value_or(UpgradeFigures{});
  exact("upgrades applied", f.applied, 1);
  out.push_back({"command's output gap (s)", Seconds(f.command_gap_s), "none", true});
  out.push_back({"old topology's drain (s)", Seconds(f.drain_s), "none", true});
  out.push_back({"longest output gap (s)", Seconds(f.output_gap_s), "none", true});
  return out;
}

std::vector<std::string> UpgradeViolations(const RunResult& run) {
  return ViolationsNotReportedElsewhere(run, CheckUpgradeBounds(run));
}

}  // namespace tempest::study
