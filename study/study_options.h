#ifndef TEMPEST_STUDY_STUDY_OPTIONS_H_
#define TEMPEST_STUDY_STUDY_OPTIONS_H_

// What a study is asked to do, shared by RunStudy (study_runner.h) and each
// ScenarioRun (scenario_run.h) it runs, so that neither includes the other.

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "study/scenario.h"

namespace tempest::study {

// The delivery guarantees a study compares (KafkaSpout processingGuarantee).
inline constexpr const char* kGuarantees[] = {"at-least-once", "at-most-once", "no-guarantee"};

struct StudyOptions {
  std::vector<Scenario> scenarios;
  std::vector<std::string> guarantees;  // from kGuarantees
  int64_t records = 20'000;             // produced per scenario
  double rate = 2'000;                  // records/s
  uint64_t seed = 1;
  std::string out_dir;  // results, report, and the world's state and logs
  // Where the topologies write (sinks, the fault switch), set by RunStudy
  // when the worker accounts cannot reach out_dir (a private parent, under
  // root): a folder made for them, each scenario's files copied into out_dir
  // when it ends. Empty: they write under out_dir itself.
  std::string worker_out_dir;
  std::string binary;  // the tempest binary (daemons, submit, kill)
  int partitions = 4;
  // Run on several network-namespace hosts (StudyWorld::Options::hosts):
  // only the partition scenarios (NeedsHosts) run there, and only there.
  bool hosts = false;
  // How long a scenario may take to settle after production and its fault end.
  double settle_timeout_s = 90;
  // Polled often; true stops the study after cleaning up (Ctrl-C).
  std::function<bool()> stop_requested = [] { return false; };
};

}  // namespace tempest::study

#endif  // TEMPEST_STUDY_STUDY_OPTIONS_H_
