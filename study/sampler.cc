#include "study/sampler.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <utility>

#include "absl/status/statusor.h"
#include "absl/strings/numbers.h"
#include "study/committed_offsets.h"

namespace tempest::study {
namespace {

using SteadyClock = std::chrono::steady_clock;

// How long a settled run must stay still before it counts as quiescent.
constexpr double kStillFor = 2.0;

}  // namespace

SinkFollower::SinkFollower(std::string path, int64_t records)
    : path_(std::move(path)), seen_(static_cast<size_t>(std::max<int64_t>(records, 0)), false) {}

void SinkFollower::Poll() {
  std::ifstream in(path_, std::ios::binary);
  if (!in) return;
  in.seekg(static_cast<std::streamoff>(offset_));
  char buf[65536];
  while (in.read(buf, sizeof(buf)) || in.gcount() > 0) {
    const std::streamsize n = in.gcount();
    offset_ += static_cast<uint64_t>(n);
    for (std::streamsize i = 0; i < n; ++i) {
      if (buf[i] != '\n') {
        if (partial_.size() < 64) partial_.push_back(buf[i]);
        continue;
      }
      ++lines_;
      int64_t seq = 0;
      if (absl::SimpleAtoi(partial_, &seq) && seq >= 0 &&
          seq < static_cast<int64_t>(seen_.size()) && !seen_[static_cast<size_t>(seq)]) {
        seen_[static_cast<size_t>(seq)] = true;
        ++distinct_;
      }
      partial_.clear();
    }
  }
}

Sampler::Sampler(Options options) : options_(std::move(options)) {
  for (const Watched& w : options_.pipelines) {
    Pipeline p;
    p.watched = w;
    p.sink = std::make_unique<SinkFollower>(w.sink_log, options_.records);
    p.max_committed.assign(options_.partitions, -1);
    pipelines_.push_back(std::move(p));
  }
  samples_.resize(pipelines_.size());
}

Sampler::~Sampler() { Stop(); }

void Sampler::Start(SteadyClock::time_point t0) {
  t0_ = t0;
  stop_ = false;
  thread_ = std::thread([this] { Loop(); });
}

void Sampler::Stop() {
  stop_ = true;
  if (thread_.joinable()) thread_.join();
}

void Sampler::Loop() {
  coord::ZkSession::Options o;
  o.connect_string = options_.zk_connect;
  o.config = options_.zk_config;
  o.operation_timeout = std::chrono::milliseconds(300);
  absl::StatusOr<std::unique_ptr<coord::ZkSession>> zk = coord::ZkSession::Create(o);
  if (!zk.ok()) return;
  // Not connected yet, a sample's commits read as unreadable until it is.
  (void)(*zk)->WaitConnected(std::chrono::seconds(10));
  while (!stop_) {
    const auto next = SteadyClock::now() + kEvery;
    SampleOnce(**zk);
    std::this_thread::sleep_until(next);
  }
  (*zk)->Close();
}

void Sampler::SampleOnce(coord::ZkSession& zk) {
  // The cheap readings first, all at one instant; then ZooKeeper, which may
  // be unreachable (quorum loss).
  const double t =
      std::round(std::chrono::duration<double>(SteadyClock::now() - t0_).count() * 1000.0) / 1000.0;
  const int64_t log_end = options_.log_end();
  std::vector<Sample> taken;
  for (Pipeline& p : pipelines_) {
    Sample s;
    s.t_s = t;
    p.sink->Poll();
    s.sink_received = p.sink->lines();
    s.sink_distinct = p.sink->distinct();
    s.log_end = log_end;
    taken.push_back(s);
  }
  ReadCommits(zk, taken);
  absl::MutexLock lock(&mu_);
  for (size_t i = 0; i < pipelines_.size(); ++i) samples_[i].push_back(taken[i]);
}

void Sampler::ReadCommits(coord::ZkSession& zk, std::vector<Sample>& taken) {
  // The first failed read marks the rest of this sample unreadable instead of
  // waiting out each pipeline's timeout.
  for (size_t i = 0; i < pipelines_.size(); ++i) {
    Pipeline& p = pipelines_[i];
    std::optional<std::vector<int64_t>> committed =
        ReadCommitted(zk, p.watched.spout_id, options_.partitions);
    if (!committed.has_value()) return;
    int64_t sum = 0;
    for (int k = 0; k < options_.partitions; ++k) {
      const int64_t c = (*committed)[k];
      if (c < 0) {
        sum = -1;
        break;
      }
      if (c < p.max_committed[k]) ++p.regressions;
      p.max_committed[k] = std::max(p.max_committed[k], c);
      sum += c;
    }
    taken[i].committed = sum;
  }
}

std::vector<Sample> Sampler::samples(size_t i) const {
  absl::MutexLock lock(&mu_);
  return samples_[i];
}

bool Sampler::Settled(std::optional<double> production_end_s) {
  absl::MutexLock lock(&mu_);
  for (const std::vector<Sample>& series : samples_) {
    if (series.empty()) return false;
    const Sample& last = series.back();
    // Only a sample taken after the last delivery report has the final log end.
    if (!production_end_s.has_value() || last.t_s <= *production_end_s) return false;
    if (last.committed < 0 || last.committed < last.log_end) return false;
    // The sink has not moved for kStillFor seconds.
    for (auto it = series.rbegin(); it != series.rend(); ++it) {
      if (it->sink_received != last.sink_received) return false;
      if (last.t_s - it->t_s >= kStillFor) break;
    }
    if (last.t_s - series.front().t_s < kStillFor) return false;
  }
  return true;
}

bool Sampler::AllSinksFlowing() {
  absl::MutexLock lock(&mu_);
  for (const std::vector<Sample>& series : samples_) {
    if (series.empty() || series.back().sink_received == 0) return false;
  }
  return true;
}

}  // namespace tempest::study
