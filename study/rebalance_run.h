#ifndef TEMPEST_STUDY_REBALANCE_RUN_H_
#define TEMPEST_STUDY_REBALANCE_RUN_H_

#include <chrono>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "study/study_results.h"
#include "study/study_world.h"

namespace tempest::study {

// rebalance-under-load's moves: `tempest rebalance NAME -w 0 -e
// transform=N` for every pipeline side by side, each followed by a wait
// until every worker of the pipeline runs the assignment it produced, and
// the census of the pipelines' workers against those before the first
// move. Main thread only (it runs `tempest` children of the world).
class PipelineRebalancer {
 public:
  // `topologies`: the pipelines' names (a worker belongs to NAME when its
  // topology id starts with "NAME-"); `now`: the scenario's clock (s).
  PipelineRebalancer(StudyWorld& world, std::vector<std::string> topologies,
                     std::function<double()> now);

  // Rebalances kRebalancedBolt of every pipeline to `executors`, then waits
  // up to `timeout` until each pipeline has as many workers as before, all
  // beating with an assignment version above the one they ran before. A
  // pipeline that does not settle in time is not counted as applied (its
  // bound fails); only a command that fails is an error. `stop` ends the
  // wait early.
  absl::Status Rebalance(int executors, std::chrono::seconds timeout,
                         const std::function<bool()>& stop);

  // What the moves did to `topology` so far: its workers before the first
  // move, those still the same process now (kept) and those gone
  // (restarted), the moves it settled and how long each took. Reads the
  // world's workers now, so call it before the topologies are killed.
  RebalanceFigures Figures(const std::string& topology) const;

 private:
  std::vector<StudyWorld::Worker> WorkersOf(const std::vector<StudyWorld::Worker>& all,
                                            const std::string& topology) const;

  StudyWorld& world_;
  const std::vector<std::string> topologies_;
  const std::function<double()> now_;
  std::vector<StudyWorld::Worker> first_;                // every worker before the first move
  std::map<std::string, std::vector<double>> settle_s_;  // per topology, per settled move
  std::vector<double> moved_at_s_;                       // per move: when its commands ran
};

// The longest time during which the sink received no new line while
// records it had not received were produced, among the gaps that end in
// [from_s, to_s) (a sink that never resumed: until the last sample, if that
// lies in the window). Sampled every 200 ms, so it is accurate to about
// that, and a steady flow reads as one sample interval. Absent without
// samples. Pure; any thread.
std::optional<double> LongestOutputGap(const std::vector<Sample>& samples, double from_s,
                                       double to_s = std::numeric_limits<double>::infinity());

// Sets f.gaps_s (one per move in f.moved_at_s, until the next move) and
// f.output_gap_s (from the first move on; absent without one). Pure.
void FillOutputGaps(const std::vector<Sample>& samples, RebalanceFigures& f);

// rebalance-under-load's figures against their bounds: lost = what
// retention deleted (0) under every guarantee (the restarted worker drains
// first and the others are not touched); duplicated = 0 at-most-once, else
// at most ReplayBound (a restart makes the spout replay at most what it read
// above its last commit); the effectively-once sink's lost and duplicated =
// 0; zombie commits = 0; every rebalance applied (= 2); at least one worker
// kept; the workers restarted and the longest output gap, unbounded.
std::vector<BoundCheck> CheckRebalanceBounds(const RunResult& run);

// The failed bounds of CheckRebalanceBounds that CheckExpectations does not
// already report, as violations.
std::vector<std::string> RebalanceViolations(const RunResult& run);

}  // namespace tempest::study

#endif  // TEMPEST_STUDY_REBALANCE_RUN_H_
