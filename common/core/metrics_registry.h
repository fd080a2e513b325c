#ifndef TEMPEST_COMMON_CORE_METRICS_REGISTRY_H_
#define TEMPEST_COMMON_CORE_METRICS_REGISTRY_H_

#include <array>
#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"

namespace tempest::core {

// Label set of a metric, e.g. {{"op","set"},{"code","ZCONNECTIONLOSS"}}. Kept
// sorted by key so the same labels always name the same series.
using MetricLabels = std::map<std::string, std::string>;

namespace metrics_internal {
// Each writing thread lands on its own cache line (up to kStripes threads
// before sharing), so hot-path updates never bounce a line between cores.
inline constexpr int kStripes = 16;
int ThisThreadStripe();
struct alignas(64) PaddedCounter {
  std::atomic<int64_t> value{0};
};
}  // namespace metrics_internal

// A monotonically increasing count. Add() is wait-free and cheap enough for
// per-tuple use; Value() sums the stripes and may lag concurrent writers.
class Counter {
 public:
  void Add(int64_t delta = 1) {
    stripes_[metrics_internal::ThisThreadStripe()].value.fetch_add(delta,
                                                                   std::memory_order_relaxed);
  }
  int64_t Value() const;

 private:
  std::array<metrics_internal::PaddedCounter, metrics_internal::kStripes> stripes_;
};

// A value that goes up and down (queue depth, current state, lag).
class Gauge {
 public:
  void Set(int64_t value) { value_.store(value, std::memory_order_relaxed); }
  void Add(int64_t delta) { value_.fetch_add(delta, std::memory_order_relaxed); }
  int64_t Value() const { return value_.load(std::memory_order_relaxed); }

 private:
  std::atomic<int64_t> value_{0};
};

// A distribution of non-negative integer values (typically microseconds) in
// log-linear buckets: 8 sub-buckets per power of two, so any quantile is
// reported within 12.5% of the true value. Record() is lock-free.
class Histogram {
 public:
  static constexpr int kSubBucketBits = 3;
  static constexpr int kBuckets = 64 << kSubBucketBits;

  void Record(int64_t value);
  int64_t Count() const;
  int64_t Sum() const { return sum_.load(std::memory_order_relaxed); }
  int64_t Max() const { return max_.load(std::memory_order_relaxed); }
  // Upper bound of the bucket holding quantile q (0..1); 0 when empty.
  int64_t Quantile(double q) const;

  static int BucketOf(int64_t value);
  static int64_t BucketUpperBound(int bucket);

 private:
  std::array<std::atomic<int64_t>, kBuckets> buckets_{};
  std::atomic<int64_t> sum_{0};
  std::atomic<int64_t> max_{0};
};

// One series as read by Snapshot().
struct MetricSample {
  enum class Kind { kCounter, kGauge, kHistogram };
  std::string name;
  MetricLabels labels;
  Kind kind = Kind::kCounter;
  int64_t value = 0;                           // counter or gauge value; histogram count
  int64_t sum = 0, p50 = 0, p99 = 0, max = 0;  // histograms only
};

// Writes the Prometheus text exposition format (version 0.0.4): the one
// writer of that format, used by MetricsRegistry::RenderPrometheus and by
// nimbus's /metrics. Label values are escaped (backslash, quote, newline);
// names are written as given. Plain value type; one per rendering.
class PrometheusTextWriter {
 public:
  using Label = std::pair<std::string_view, std::string_view>;

  // "# HELP name help" (left out when `help` is empty), then "# TYPE name type".
  void Family(std::string_view name, std::string_view type, std::string_view help = {});
  // "name{k="v",...} value", the labels in the order given ("name value"
  // without labels).
  void Sample(std::string_view name, std::span<const Label> labels, int64_t value);
  void Sample(std::string_view name, int64_t value) { Sample(name, {}, value); }
  // The same with a fractional value (seconds, ratios), shortest exact form.
  void SampleFraction(std::string_view name, std::span<const Label> labels, double value);

  const std::string& text() const { return out_; }
  std::string Take() { return std::move(out_); }

 private:
  void AppendSeries(std::string_view name, std::span<const Label> labels);
  std::string out_;
};

// Owns every metric of a process (or of a test). Lookups take a mutex and are
// meant for set-up time: callers keep the returned reference, which stays
// valid for the registry's lifetime, and update it lock-free on hot paths.
// Thread-safe.
class MetricsRegistry {
 public:
  Counter& GetCounter(const std::string& name, const MetricLabels& labels = {});
  Gauge& GetGauge(const std::string& name, const MetricLabels& labels = {});
  Histogram& GetHistogram(const std::string& name, const MetricLabels& labels = {});

  // Every series, sorted by name then labels.
  std::vector<MetricSample> Snapshot() const;
  // Prometheus text exposition format (histograms as summaries).
  std::string RenderPrometheus() const;

  // The process-wide registry that daemons expose on /metrics.
  static MetricsRegistry& Global();

 private:
  using Key = std::pair<std::string, MetricLabels>;
  mutable absl::Mutex mu_;
  std::map<Key, std::unique_ptr<Counter>> counters_ ABSL_GUARDED_BY(mu_);
  std::map<Key, std::unique_ptr<Gauge>> gauges_ ABSL_GUARDED_BY(mu_);
  std::map<Key, std::unique_ptr<Histogram>> histograms_ ABSL_GUARDED_BY(mu_);
};

}  // namespace tempest::core

#endif  // TEMPEST_COMMON_CORE_METRICS_REGISTRY_H_
