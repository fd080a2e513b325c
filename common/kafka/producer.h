#ifndef TEMPEST_COMMON_KAFKA_PRODUCER_H_
#define TEMPEST_COMMON_KAFKA_PRODUCER_H_

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/kafka/handles.h"

namespace tempest::kafka {

// One record to send. Key and value are copied by Produce; nullopt sends a
// null key or value (not an empty one).
struct OutgoingRecord {
  static constexpr int32_t kAnyPartition = -1;  // the partitioner picks

  std::string_view topic;
  int32_t partition = kAnyPartition;
  std::optional<std::string_view> key;
  std::optional<std::string_view> value;
  std::vector<std::pair<const char*, std::string_view>> headers;  // NUL-terminated names
  void* opaque = nullptr;  // handed back in the record's Delivery
};

// The outcome of one record, reported once per produced record.
struct Delivery {
  bool ok = false;
  std::string_view error;  // librdkafka's text when !ok
  std::string_view topic;
  int32_t partition = -1;
  int64_t offset = -1;
  void* opaque = nullptr;
};

// A librdkafka producer with delivery reports. Not thread-safe: one thread
// produces, polls and flushes, and the delivery callback runs on that thread
// inside Poll, Flush and Produce's waits (never inside librdkafka's own
// threads). Destroying it neither flushes nor reports outstanding records.
class Producer {
 public:
  using DeliveryCallback = std::function<void(const Delivery&)>;

  // `conf` is consumed. On failure the status carries librdkafka's reason.
  static absl::StatusOr<std::unique_ptr<Producer>> Create(ConfHandle conf,
                                                          DeliveryCallback on_delivery);
  Producer(const Producer&) = delete;
  Producer& operator=(const Producer&) = delete;
  ~Producer();

  // Opens (and keeps) the handle of `topic`, so a bad name fails here rather
  // than at the first Produce. Produce opens unknown topics itself.
  absl::Status OpenTopic(const std::string& topic);

  // Queues one record. ResourceExhausted: the local queue is full (Poll makes
  // room); FailedPrecondition: the producer hit a fatal error; otherwise
  // Unavailable. The message is librdkafka's text.
  absl::Status Produce(const OutgoingRecord& record);

  // Serves ready delivery reports, waiting up to `timeout` for one; returns
  // how many events were served.
  int Poll(std::chrono::milliseconds timeout = std::chrono::milliseconds(0));
  // Waits until every queued record is delivered or failed; false if some
  // were still outstanding after `timeout`.
  bool Flush(std::chrono::milliseconds timeout);
  // Drops queued and in-flight records; their failed reports come from later
  // polls.
  void Purge();
  // Records queued or in flight.
  int OutstandingRecords() const;
  // The fatal error's text, or empty while none happened.
  std::string FatalError() const;

 private:
  explicit Producer(DeliveryCallback on_delivery);
  static void OnDeliveryReport(rd_kafka_t* rk, const rd_kafka_message_t* message, void* opaque);
  absl::StatusOr<rd_kafka_topic_t*> Topic(std::string_view topic);

  DeliveryCallback on_delivery_;
  // Destroyed before client_, which they belong to.
  ClientHandle client_;
  absl::flat_hash_map<std::string, TopicHandle> topics_;
};

}  // namespace tempest::kafka

#endif  // TEMPEST_COMMON_KAFKA_PRODUCER_H_
