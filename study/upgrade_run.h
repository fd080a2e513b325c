#ifndef TEMPEST_STUDY_UPGRADE_RUN_H_
#define TEMPEST_STUDY_UPGRADE_RUN_H_

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "study/pipeline_topology.h"
#include "study/study_results.h"
#include "study/study_world.h"

namespace tempest::study {

// upgrade-under-load's move: `tempest upgrade NAME COPY.yaml --wait
// kUpgradeWaitSecs` for every pipeline side by side, COPY being the
// pipeline's own topology under NAME + kUpgradedSuffix with the same spout
// id (its offsets stay where they are, so no carry: the copy reads on from
// the old topology's last commits). Main thread only (it runs `tempest`
// children of the world).
class PipelineUpgrader {
 public:
  struct Target {
    std::string name;       // the running topology
    std::string copy_yaml;  // the copy's Flux file, written already
  };
  // `now`: the scenario's clock (s).
  PipelineUpgrader(StudyWorld& world, std::vector<Target> targets, std::function<double()> now);

  // Runs the upgrades and waits for all of them (each at most `timeout`).
  // A command that fails is an error naming the pipeline; its figures then
  // say it was not applied.
  absl::Status Upgrade(std::chrono::seconds timeout);

  // What the upgrade of `name` did (all zero before Upgrade).
  UpgradeFigures Figures(const std::string& name) const;

 private:
  StudyWorld& world_;
  const std::vector<Target> targets_;
  const std::function<double()> now_;
  std::map<std::string, UpgradeFigures> figures_;
};

// Writes the copy of the pipeline `spec` describes beside its Flux file
// `yaml_path` (as "<stem>-copy.yaml"): the same topology under
// spec.name + kUpgradedSuffix, its spout keeping spec.name as its id.
// Returns the copy's path.
absl::StatusOr<std::string> WriteUpgradeCopy(const PipelineSpec& spec,
                                             const std::string& yaml_path);

// The figures of the command's last line, "upgrade 5/5: NEW activated;
// output gap G s (OLD's drain D s, cutover C s)", into f.command_gap_s and
// f.drain_s; nothing when the output has no such line. Pure.
void ParseUpgradeOutput(const std::string& out, UpgradeFigures& f);

// upgrade-under-load's figures against their bounds: lost = what retention
// deleted (0) under every guarantee (the old topology drains before it is
// removed, and the copy starts at its commits); duplicated = 0 at-most-once,
// else at most ReplayBound (what the old spout had read above its last
// commit when it stopped); the effectively-once sink's lost and duplicated
// = 0; zombie commits = 0 (one owner per partition); the upgrade applied
// (= 1); the output gap and the command's own gap and drain, unbounded.
std::vector<BoundCheck> CheckUpgradeBounds(const RunResult& run);

// The failed bounds of CheckUpgradeBounds that CheckExpectations does not
// already report, as violations.
std::vector<std::string> UpgradeViolations(const RunResult& run);

}  // namespace tempest::study

#endif  // TEMPEST_STUDY_UPGRADE_RUN_H_
