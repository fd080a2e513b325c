#ifndef TEMPEST_STUDY_SCENARIO_RUN_H_
#define TEMPEST_STUDY_SCENARIO_RUN_H_

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "study/fault_injector.h"
#include "study/paced_producer.h"
#include "study/pipeline_topology.h"
#include "study/progress.h"
#include "study/rebalance_run.h"
#include "study/run_analysis.h"
#include "study/sampler.h"
#include "study/scenario.h"
#include "study/study_options.h"
#include "study/study_results.h"
#include "study/study_world.h"
#include "study/upgrade_run.h"

namespace tempest::study {

// One scenario against the world, orchestrated from the main thread: a fresh
// topic, one pipeline topology per guarantee side by side, the paced producer
// and the sampler threads (started here and joined before Run returns), the
// fault at its planned moment (it waits past that moment until every
// pipeline's sink has received a record, but never past the end of
// production), healing, settling, and the analysis into one RunResult per
// guarantee. It is the fault's FaultTargets.
class ScenarioRun final : private FaultTargets {
 public:
  ScenarioRun(StudyWorld& world, const StudyOptions& options, const Scenario& scenario,
              StudyProgress& progress);
  // Copies what the topologies wrote outside --out (StudyOptions::worker_out_dir) into it.
  ~ScenarioRun();

  // Runs the scenario; the results are one RunResult per guarantee.
  absl::StatusOr<std::vector<RunResult>> Run();
  // Not OK when a fault could not be undone: later scenarios cannot run.
  const absl::Status& world_broken() const { return world_broken_; }

 private:
  // One topology of the scenario: a guarantee's pipeline.
  struct Pipeline {
    PipelineSpec spec;
    std::string yaml_path;
    // Retention: what was deleted before the pipeline saw it.
    int64_t expected_loss = 0;
    int64_t dedup_expected_loss = 0;
    // The spout workers' commit metrics, latest per worker.
    std::map<pid_t, std::map<std::string, int64_t>> commit_metrics;
    CommitPathFigures commit_maxima;  // gauges and histograms: their largest values
    bool upgraded = false;  // upgrade: the topology is now its copy, spec.name + kUpgradedSuffix
  };

  absl::Status Prepare();
  // Prepare, submit and wait until every spout reads its partitions.
  absl::Status StartTopologies();
  absl::Status WaitSpoutsReady(std::chrono::seconds timeout);
  void StartSampler();
  void StartProducer();
  // The loop from the start of production until everything settled, the
  // study was stopped or the fault failed (its error).
  absl::Status DriveFault();
  // Injects the fault once its moment has come and the pipelines flow;
  // the injection's error.
  absl::Status MaybeInject(double t);
  bool HealDue(bool producing) const;
  // Heals what the loop left injected, stops the threads; the error that
  // leaves the world broken, if any.
  absl::Status StopAll(const absl::Status& fault_status);
  std::vector<RunResult> Analyse();
  RunResult AnalysePipeline(const Pipeline& p, size_t index, coord::ZkSession* zk);
  DedupSinkResult AnalyseDedupSink(const Pipeline& p, std::vector<std::string>& problems);
  std::vector<std::string> OurTopologies() const;

  // FaultTargets.
  double Now() const override;
  std::vector<StudyWorld::Worker> SpoutWorkers() const override;
  absl::Status KillTopologies() override;
  // The kill after a run, for cleaning up: as KillTopologies, and a kill
  // refused because the nimbus does not list the name yet is tried again, on
  // its own, for up to 30 s.
  absl::Status KillTopologiesAfterRun();
  absl::Status SubmitTopologies() override;
  void HoldProduction(bool held) override { producer_->Hold(held); }
  void ProduceBigRecords() override { producer_->UseBigKeys(); }
  absl::Status RecordRetentionLoss() override;
  void Note(std::string note) override { notes_.push_back(std::move(note)); }
  std::vector<std::string> OffsetNodes() override;
  absl::Status SubmitTopologiesWith(ZkServers servers) override;
  absl::Status WaitWorkerLogs(std::string_view needle, std::chrono::seconds timeout) override;
  absl::Status WaitSpoutsRunning(std::chrono::seconds timeout) override {
    return WaitSpoutsReady(timeout);
  }
  std::vector<StudyWorld::Worker> TopologyWorkers() const override;
  absl::Status RebalanceTopologies(int executors) override;
  absl::Status UpgradeTopologies() override;
  // Reads the spout workers' commit metrics into each pipeline's
  // commit_path (about once a second; main thread).
  void ReadCommitMetrics();
  // Partition faults: notes when each spout cut from ZooKeeper, and the
  // nimbus leader cut off, fenced itself (polled every 200 ms from the cut
  // until shortly after the heal).
  void StartFenceWatch();
  // The fence lines pipeline `p`'s spout and workers have logged so far.
  int64_t FenceLines(const Pipeline& p) const;
  void WatchFences();
  // The old leader's log lines after it lost leadership that record a state
  // change (partition-nimbus-leader).
  int64_t LeaderWritesAfterLoss() const;
  // Fills the partition figures and bounds of a multi-host run.
  void FillPartitionFigures(const Pipeline& p, RunResult& r) const;
  // What this scenario's fault requires of a run beyond its guarantee.
  std::vector<std::string> CheckFaultExpectations(const RunResult& r) const;

  StudyWorld& world_;
  const StudyOptions& options_;
  const Scenario& scenario_;
  StudyProgress& progress_;
  RecordLayout layout_;
  std::string topic_;
  std::filesystem::path dir_;
  std::filesystem::path work_dir_;  // where the topologies write: dir_ or outside --out
  double production_s_ = 0;
  FaultPlan plan_;
  std::string switch_file_;
  std::vector<Pipeline> pipelines_;

  std::chrono::steady_clock::time_point t0_;
  FaultInjector injector_;
  bool fault_held_for_flow_ = false;
  std::optional<double> production_end_s_;  // when the producer was seen done
  bool quiesced_ = false;
  std::vector<std::string> notes_;
  std::chrono::steady_clock::time_point next_metrics_read_{};
  std::unique_ptr<PacedProducer> producer_;
  std::unique_ptr<Sampler> sampler_;
  std::unique_ptr<PipelineRebalancer> rebalancer_;  // rebalance: made by its first move
  std::unique_ptr<PipelineUpgrader> upgrader_;      // upgrade: made by the upgrade
  absl::Status world_broken_;
  // Fence watch: per pipeline name, the fence lines logged before the cut
  // and the time the first new one appeared; the old nimbus leader's too.
  std::map<std::string, int64_t> fence_lines_before_;
  std::map<std::string, double> fenced_at_;
  int64_t leader_lines_before_ = 0;
  std::optional<double> leader_fenced_at_;
  std::chrono::steady_clock::time_point next_fence_poll_{};
};

}  // namespace tempest::study

#endif  // TEMPEST_STUDY_SCENARIO_RUN_H_
