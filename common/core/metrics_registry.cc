#include "common/core/metrics_registry.h"

#include <algorithm>
#include <bit>
#include <charconv>
#include <string>

namespace tempest::core {

namespace metrics_internal {
int ThisThreadStripe() {
  static std::atomic<int> next_stripe{0};
  thread_local const int stripe = next_stripe.fetch_add(1, std::memory_order_relaxed) % kStripes;
  return stripe;
}
}  // namespace metrics_internal

int64_t Counter::Value() const {
  int64_t total = 0;
  for (const auto& stripe : stripes_) total += stripe.value.load(std::memory_order_relaxed);
  return total;
}

int Histogram::BucketOf(int64_t value) {
  if (value <= 0) return 0;
  const auto v = static_cast<uint64_t>(value);
  constexpr uint64_t kSub = 1u << kSubBucketBits;
  if (v < kSub) return static_cast<int>(v);
  // Position of the highest set bit picks the power of two; the next
  // kSubBucketBits bits pick the linear sub-bucket inside it.
  const int msb = 63 - std::countl_zero(v);
  const int shift = msb - kSubBucketBits;
  const auto sub = static_cast<int>((v >> shift) & (kSub - 1));
  return std::min(kBuckets - 1, ((shift + 1) << kSubBucketBits) + sub);
}

int64_t Histogram::BucketUpperBound(int bucket) {
  constexpr int kSub = 1 << kSubBucketBits;
  if (bucket < kSub) return bucket;
  const int shift = (bucket >> kSubBucketBits) - 1;
  const int sub = bucket & (kSub - 1);
  const uint64_t low = (static_cast<uint64_t>(kSub + sub)) << shift;
  const uint64_t width = uint64_t{1} << shift;
  return static_cast<int64_t>(low + width - 1);
}

void Histogram::Record(int64_t value) {
  if (value < 0) value = 0;
  buckets_[BucketOf(value)].fetch_add(1, std::memory_order_relaxed);
  sum_.fetch_add(value, std::memory_order_relaxed);
  int64_t seen = max_.load(std::memory_order_relaxed);
  while (value > seen && !max_.compare_exchange_weak(seen, value, std::memory_order_relaxed)) {
  }
}

int64_t Histogram::Count() const {
  int64_t n = 0;
  for (const auto& b : buckets_) n += b.load(std::memory_order_relaxed);
  return n;
}

int64_t Histogram::Quantile(double q) const {
  std::array<int64_t, kBuckets> counts;
  int64_t total = 0;
  for (int i = 0; i < kBuckets; ++i) {
    counts[i] = buckets_[i].load(std::memory_order_relaxed);
    total += counts[i];
  }
  if (total == 0) return 0;
  q = std::clamp(q, 0.0, 1.0);
  const auto rank =
      std::max<int64_t>(1, static_cast<int64_t>(q * static_cast<double>(total) + 0.5));
  int64_t seen = 0;
  for (int i = 0; i < kBuckets; ++i) {
    seen += counts[i];
    if (seen >= rank) return std::min(BucketUpperBound(i), Max());
  }
  return Max();
}

void PrometheusTextWriter::Family(std::string_view name, std::string_view type,
                                  std::string_view help) {
  if (!help.empty()) {
    out_.append("# HELP ").append(name).append(" ").append(help).append("\n");
  }
  out_.append("# TYPE ").append(name).append(" ").append(type).append("\n");
}

void PrometheusTextWriter::Sample(std::string_view name, std::span<const Label> labels,
                                  int64_t value) {
  AppendSeries(name, labels);
  out_.append(" ").append(std::to_string(value)).append("\n");
}

void PrometheusTextWriter::SampleFraction(std::string_view name, std::span<const Label> labels,
                                          double value) {
  AppendSeries(name, labels);
  char text[32];
  const auto [end, ec] = std::to_chars(text, text + sizeof(text), value);
  out_.append(" ").append(text, ec == std::errc() ? end : text).append("\n");
}

void PrometheusTextWriter::AppendSeries(std::string_view name, std::span<const Label> labels) {
  out_.append(name);
  if (!labels.empty()) {
    out_ += '{';
    for (size_t i = 0; i < labels.size(); ++i) {
      if (i > 0) out_ += ',';
      out_.append(labels[i].first).append("=\"");
      for (char c : labels[i].second) {
        if (c == '\n') {
          out_ += "\\n";
          continue;
        }
        if (c == '"' || c == '\\') out_ += '\\';
        out_ += c;
      }
      out_ += '"';
    }
    out_ += '}';
  }
}

namespace {
template <typename T>
T& GetOrCreate(std::map<std::pair<std::string, MetricLabels>, std::unique_ptr<T>>& map,
               const std::string& name, const MetricLabels& labels) {
  auto& slot = map[{name, labels}];
  if (!slot) slot = std::make_unique<T>();
  return *slot;
}

const char* PrometheusType(MetricSample::Kind kind) {
  switch (kind) {
    case MetricSample::Kind::kCounter:
      return "counter";
    case MetricSample::Kind::kGauge:
      return "gauge";
    case MetricSample::Kind::kHistogram:
      return "summary";
  }
  return "untyped";
}
}  // namespace

Counter& MetricsRegistry::GetCounter(const std::string& name, const MetricLabels& labels) {
  absl::MutexLock lock(&mu_);
  return GetOrCreate(counters_, name, labels);
}

Gauge& MetricsRegistry::GetGauge(const std::string& name, const MetricLabels& labels) {
  absl::MutexLock lock(&mu_);
  return GetOrCreate(gauges_, name, labels);
}

Histogram& MetricsRegistry::GetHistogram(const std::string& name, const MetricLabels& labels) {
  absl::MutexLock lock(&mu_);
  return GetOrCreate(histograms_, name, labels);
}

std::vector<MetricSample> MetricsRegistry::Snapshot() const {
  std::vector<MetricSample> out;
  absl::MutexLock lock(&mu_);
  for (const auto& [key, c] : counters_) {
    out.push_back({key.first, key.second, MetricSample::Kind::kCounter, c->Value()});
  }
  for (const auto& [key, g] : gauges_) {
    out.push_back({key.first, key.second, MetricSample::Kind::kGauge, g->Value()});
  }
  for (const auto& [key, h] : histograms_) {
    MetricSample s{key.first, key.second, MetricSample::Kind::kHistogram, h->Count()};
    s.sum = h->Sum();
    s.p50 = h->Quantile(0.5);
    s.p99 = h->Quantile(0.99);
    s.max = h->Max();
    out.push_back(std::move(s));
  }
  std::sort(out.begin(), out.end(), [](const MetricSample& a, const MetricSample& b) {
    return std::tie(a.name, a.labels) < std::tie(b.name, b.labels);
  });
  return out;
}

std::string MetricsRegistry::RenderPrometheus() const {
  PrometheusTextWriter out;
  std::string last_name;
  for (const auto& s : Snapshot()) {
    if (s.name != last_name) {
      out.Family(s.name, PrometheusType(s.kind));
      last_name = s.name;
    }
    std::vector<PrometheusTextWriter::Label> labels(s.labels.begin(), s.labels.end());
    if (s.kind != MetricSample::Kind::kHistogram) {
      out.Sample(s.name, labels, s.value);
      continue;
    }
    // A histogram is written as a summary: two quantiles, sum and count.
    labels.emplace_back("quantile", "0.5");
    out.Sample(s.name, labels, s.p50);
    labels.back().second = "0.99";
    out.Sample(s.name, labels, s.p99);
    labels.pop_back();
    out.Sample(s.name + "_sum", labels, s.sum);
    out.Sample(s.name + "_count", labels, s.value);
  }
  return out.Take();
}

MetricsRegistry& MetricsRegistry::Global() {
  static auto* registry = new MetricsRegistry();  // never destroyed: outlives all threads
  return *registry;
}

}  // namespace tempest::core
