#include "common/core/metrics_registry.h"

#include <algorithm>
#include <bit>
#include <sstream>

namespace tempest::core {

namespace metrics_internal {
int ThisThreadStripe() {
  static std::atomic<int> next_stripe{0};
  thread_local const int stripe =
      next_stripe.fetch_add(1, std::memory_order_relaxed) % kStripes;
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
  const auto rank = std::max<int64_t>(1, static_cast<int64_t>(q * static_cast<double>(total) + 0.5));
  int64_t seen = 0;
  for (int i = 0; i < kBuckets; ++i) {
    seen += counts[i];
    if (seen >= rank) return std::min(BucketUpperBound(i), Max());
  }
  return Max();
}

namespace {
template <typename T>
T& GetOrCreate(std::map<std::pair<std::string, MetricLabels>, std::unique_ptr<T>>& map,
               const std::string& name, const MetricLabels& labels) {
  auto& slot = map[{name, labels}];
  if (!slot) slot = std::make_unique<T>();
  return *slot;
}

std::string RenderLabels(const MetricLabels& labels, const std::string& extra = "") {
  if (labels.empty() && extra.empty()) return "";
  std::string out = "{";
  bool first = true;
  for (const auto& [k, v] : labels) {
    if (!first) out += ",";
    first = false;
    out += k + "=\"";
    for (char c : v) {
      if (c == '"' || c == '\\') out += '\\';
      if (c == '\n') {
        out += "\\n";
        continue;
      }
      out += c;
    }
    out += "\"";
  }
  if (!extra.empty()) out += (first ? "" : ",") + extra;
  return out + "}";
}
}  // namespace

Counter& MetricsRegistry::GetCounter(const std::string& name, const MetricLabels& labels) {
  std::lock_guard lock(mu_);
  return GetOrCreate(counters_, name, labels);
}

Gauge& MetricsRegistry::GetGauge(const std::string& name, const MetricLabels& labels) {
  std::lock_guard lock(mu_);
  return GetOrCreate(gauges_, name, labels);
}

Histogram& MetricsRegistry::GetHistogram(const std::string& name, const MetricLabels& labels) {
  std::lock_guard lock(mu_);
  return GetOrCreate(histograms_, name, labels);
}

std::vector<MetricSample> MetricsRegistry::Snapshot() const {
  std::vector<MetricSample> out;
  std::lock_guard lock(mu_);
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
  std::ostringstream out;
  std::string last_name;
  for (const auto& s : Snapshot()) {
    if (s.name != last_name) {
      const char* type = s.kind == MetricSample::Kind::kCounter ? "counter"
                         : s.kind == MetricSample::Kind::kGauge ? "gauge"
                                                                 : "summary";
      out << "# TYPE " << s.name << " " << type << "\n";
      last_name = s.name;
    }
    if (s.kind == MetricSample::Kind::kHistogram) {
      out << s.name << RenderLabels(s.labels, "quantile=\"0.5\"") << " " << s.p50 << "\n";
      out << s.name << RenderLabels(s.labels, "quantile=\"0.99\"") << " " << s.p99 << "\n";
      out << s.name << "_sum" << RenderLabels(s.labels) << " " << s.sum << "\n";
      out << s.name << "_count" << RenderLabels(s.labels) << " " << s.value << "\n";
    } else {
      out << s.name << RenderLabels(s.labels) << " " << s.value << "\n";
    }
  }
  return out.str();
}

MetricsRegistry& MetricsRegistry::Global() {
  static auto* registry = new MetricsRegistry();  // never destroyed: outlives all threads
  return *registry;
}

}  // namespace tempest::core
