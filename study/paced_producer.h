#ifndef TEMPEST_STUDY_PACED_PRODUCER_H_
#define TEMPEST_STUDY_PACED_PRODUCER_H_

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "study/run_analysis.h"

namespace tempest::study {

// The producer thread of one scenario: sends records 0..records-1 to the
// scenario's topic, record `seq` to partition layout.PartitionOf(seq) no
// earlier than DueAt(seq) after the start, and publishes what each partition
// has acknowledged (the log end the sampler reads). The main thread starts,
// steers (Stop, Hold, UseBigKeys) and joins it; LogEnd and done are safe from
// any thread.
class PacedProducer {
 public:
  struct Options {
    std::string bootstrap_servers;
    std::string topic;
    RecordLayout layout;  // records and partitions
    double rate = 1;      // records/s
  };

  explicit PacedProducer(Options options);
  ~PacedProducer();  // stops and joins the thread
  PacedProducer(const PacedProducer&) = delete;
  PacedProducer& operator=(const PacedProducer&) = delete;

  // When record `seq` is due, counted from the start: seq / rate seconds.
  static std::chrono::steady_clock::duration DueAt(int64_t seq, double rate);
  // The key padding that makes the records produced after a retention fault
  // overflow what the dev cluster retains per partition (about 5 MiB), so
  // the log start passes every offset committed before the fault: five times
  // the retained bytes spread over a partition's records, 1 KiB to 900 KiB.
  static size_t BigKeyBytes(const RecordLayout& layout);

  // Starts the thread; the schedule counts from `t0`.
  void Start(std::chrono::steady_clock::time_point t0);
  // The study was stopped or the fault failed: send nothing more.
  void Stop() { stop_ = true; }
  // While held, nothing is sent (retention: while the topologies die).
  void Hold(bool held) { held_ = held; }
  // From the next record on, keys are padded to BigKeyBytes.
  void UseBigKeys() { big_keys_ = true; }
  void Join();

  // True once every record was sent and flushed, or sending stopped.
  bool done() const { return done_; }
  // Acknowledged records summed over partitions.
  int64_t LogEnd() const;
  // Why sending stopped early; OK otherwise. After Join.
  absl::Status status();

 private:
  void Produce();

  const Options options_;
  std::chrono::steady_clock::time_point t0_;
  std::thread thread_;
  std::atomic<bool> big_keys_{false};
  std::atomic<bool> done_{false};
  std::atomic<bool> stop_{false};
  std::atomic<bool> held_{false};
  std::vector<std::atomic<int64_t>> delivered_;  // per partition
  absl::Mutex mu_;
  absl::Status status_ ABSL_GUARDED_BY(mu_);
};

}  // namespace tempest::study

#endif  // TEMPEST_STUDY_PACED_PRODUCER_H_
