#ifndef TEMPEST_STUDY_STUDY_RUNNER_H_
#define TEMPEST_STUDY_STUDY_RUNNER_H_

#include "absl/status/statusor.h"
#include "study/progress.h"
#include "study/study_options.h"
#include "study/study_results.h"

namespace tempest::study {

// Runs the study: starts a world (study/study_world.h), then per scenario
// creates a fresh topic, runs one KafkaSpout -> transform -> sink topology
// per guarantee side by side (the at-least-once one also feeds an
// effectively-once sink), produces `records` sequenced records at `rate`,
// injects the fault at its seeded moment, waits until everything settles,
// and diffs input, output and committed offsets. Returns one RunResult per
// scenario x guarantee; an error only when the world itself cannot run.
// Each scenario is a ScenarioRun (study/scenario_run.h). Blocks; call from
// the main thread (it owns child processes).
absl::StatusOr<StudyResults> RunStudy(const StudyOptions& options, StudyProgress& progress);

}  // namespace tempest::study

#endif  // TEMPEST_STUDY_STUDY_RUNNER_H_
