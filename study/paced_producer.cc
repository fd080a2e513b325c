#include "study/paced_producer.h"

#include <algorithm>
#include <memory>
#include <utility>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "common/kafka/record_producer.h"

namespace tempest::study {
namespace {

using SteadyClock = std::chrono::steady_clock;
using std::chrono::milliseconds;
using std::chrono::seconds;

// The dev cluster keeps about 5 MiB per partition (see DevKafkaCluster).
constexpr int64_t kRetainedBytesPerPartition = 5 * 1024 * 1024;

}  // namespace

PacedProducer::PacedProducer(Options options)
    : options_(std::move(options)), delivered_(options_.layout.partitions) {}

PacedProducer::~PacedProducer() {
  Stop();
  Join();
}

SteadyClock::duration PacedProducer::DueAt(int64_t seq, double rate) {
  return std::chrono::duration_cast<SteadyClock::duration>(std::chrono::duration<double>(seq / rate));
}

size_t PacedProducer::BigKeyBytes(const RecordLayout& layout) {
  const int64_t per_partition = std::max<int64_t>(layout.CountIn(0), 1);
  return static_cast<size_t>(
      std::clamp<int64_t>(5 * kRetainedBytesPerPartition / per_partition, 1024, 900 * 1024));
}

void PacedProducer::Start(SteadyClock::time_point t0) {
  t0_ = t0;
  done_ = false;
  thread_ = std::thread([this] { Produce(); });
}

void PacedProducer::Join() {
  if (thread_.joinable()) thread_.join();
}

int64_t PacedProducer::LogEnd() const {
  int64_t log_end = 0;
  for (const auto& d : delivered_) log_end += d.load();
  return log_end;
}

absl::Status PacedProducer::status() {
  absl::MutexLock lock(&mu_);
  return status_;
}

void PacedProducer::Produce() {
  const RecordLayout& layout = options_.layout;
  absl::StatusOr<std::unique_ptr<kafka::RecordProducer>> producer =
      kafka::RecordProducer::Create(options_.bootstrap_servers);
  absl::Status status = producer.status();
  if (producer.ok()) {
    const std::string padding(BigKeyBytes(layout), 'x');
    auto publish = [&] {
      for (int p = 0; p < layout.partitions; ++p) {
        delivered_[p] = (*producer)->DeliveredTo(options_.topic, p);
      }
    };
    for (int64_t seq = 0; seq < layout.records && status.ok() && !stop_; ++seq) {
      const auto due = t0_ + DueAt(seq, options_.rate);
      if (SteadyClock::now() < due) {
        (*producer)->Poll();
        publish();
        std::this_thread::sleep_until(due);
      } else if (seq % 256 == 0) {
        // Behind schedule: still serve delivery reports and publish the
        // log end now and then.
        (*producer)->Poll();
        publish();
      }
      while (held_ && !stop_) {
        (*producer)->Poll();
        std::this_thread::sleep_for(milliseconds(10));
      }
      std::string key = absl::StrCat("k", seq);
      if (big_keys_) absl::StrAppend(&key, "-", padding);
      status = (*producer)->Send(options_.topic, layout.PartitionOf(seq), key, absl::StrCat(seq),
                                 seconds(120));
    }
    if (status.ok()) status = (*producer)->Flush(stop_ ? seconds(1) : seconds(120));
    publish();
  }
  absl::MutexLock lock(&mu_);
  status_ = status;
  done_ = true;
}

}  // namespace tempest::study
