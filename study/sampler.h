#ifndef TEMPEST_STUDY_SAMPLER_H_
#define TEMPEST_STUDY_SAMPLER_H_

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "common/coord/zk_session.h"
#include "study/study_results.h"

namespace tempest::study {

// Follows a growing sink log without rereading it: how many lines it holds
// and how many distinct records (plain integer lines; see CountDeliveries for
// the full parse done at the end). Used by the sampler thread only.
class SinkFollower {
 public:
  SinkFollower(std::string path, int64_t records);

  // Reads what was appended since the last call.
  void Poll();
  int64_t lines() const { return lines_; }
  int64_t distinct() const { return distinct_; }

 private:
  std::string path_;
  uint64_t offset_ = 0;
  int64_t lines_ = 0;
  int64_t distinct_ = 0;
  std::string partial_;
  std::vector<bool> seen_;
};

// The sampler thread of one scenario: every kEvery it takes one Sample per
// pipeline (sink log lines, the log end, the committed offsets from
// ZooKeeper) and watches each partition's committed offset for regressions.
// Start, Stop and the accessors are for the main thread; Settled and
// AllSinksFlowing may be called while the thread runs (they lock).
class Sampler {
 public:
  static constexpr std::chrono::milliseconds kEvery{200};

  struct Watched {
    std::string spout_id;
    std::string sink_log;
  };
  struct Options {
    std::string zk_connect;
    coord::ZkClientConfig zk_config;  // e.g. credentials that read creator-only offset nodes
    std::vector<Watched> pipelines;
    int partitions = 1;
    int64_t records = 0;
    // The records produced so far, summed over partitions (any thread).
    std::function<int64_t()> log_end;
  };

  explicit Sampler(Options options);
  ~Sampler();  // stops the thread
  Sampler(const Sampler&) = delete;
  Sampler& operator=(const Sampler&) = delete;

  // Samples from now on; t_s counts from `t0`.
  void Start(std::chrono::steady_clock::time_point t0);
  void Stop();

  // True when every pipeline has settled: a sample taken after production
  // ended (`production_end_s`, absent while producing) shows everything
  // committed, and the sink has not moved for kStillFor seconds.
  bool Settled(std::optional<double> production_end_s);
  // True once every pipeline's sink has received a record: a fault that hits
  // a pipeline before then tests nothing (see "Not tested" in the guide).
  bool AllSinksFlowing();

  // After Stop: pipeline i's samples and its committed-offset regressions.
  std::vector<Sample> samples(size_t i) const;
  int64_t regressions(size_t i) const { return pipelines_[i].regressions; }

 private:
  struct Pipeline {
    Watched watched;
    std::unique_ptr<SinkFollower> sink;
    std::vector<int64_t> max_committed;  // per partition, highest seen
    int64_t regressions = 0;
  };

  void Loop();
  void SampleOnce(coord::ZkSession& zk);
  // Sets each taken sample's committed sum; stops at the first unreadable read.
  void ReadCommits(coord::ZkSession& zk, std::vector<Sample>& taken);

  const Options options_;
  std::vector<Pipeline> pipelines_;
  std::chrono::steady_clock::time_point t0_;
  std::thread thread_;
  std::atomic<bool> stop_{false};
  mutable absl::Mutex mu_;
  // Per pipeline, the samples taken so far (the thread appends, Settled and
  // AllSinksFlowing read while it runs).
  std::vector<std::vector<Sample>> samples_ ABSL_GUARDED_BY(mu_);
};

}  // namespace tempest::study

#endif  // TEMPEST_STUDY_SAMPLER_H_
