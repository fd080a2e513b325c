#ifndef TEMPEST_COMMON_KAFKA_RECORD_PRODUCER_H_
#define TEMPEST_COMMON_KAFKA_RECORD_PRODUCER_H_

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/kafka/producer.h"

namespace tempest::kafka {

// A Kafka producer for tools that write records of their own, such as the
// sequenced input of `tempest study`. Idempotent with acks=all, so every
// delivered record landed exactly once and, per partition, in the order
// sent: on a fresh topic the n-th record sent to a partition gets offset n,
// even across a broker outage shorter than the delivery timeout (2 min;
// librdkafka retries until then, and a record still undelivered fails
// Flush).
//
// Owns a Producer. Not thread-safe: one thread sends,
// polls and flushes; delivery reports are served on that thread by Poll,
// Send and Flush.
class RecordProducer {
 public:
  static absl::StatusOr<std::unique_ptr<RecordProducer>> Create(
      const std::string& bootstrap_servers);
  ~RecordProducer();
  RecordProducer(const RecordProducer&) = delete;
  RecordProducer& operator=(const RecordProducer&) = delete;

  // Queues one record (key and value are copied). While librdkafka's local
  // queue is full, serves delivery reports and retries until `timeout`.
  absl::Status Send(const std::string& topic, int partition, std::string_view key,
                    std::string_view value,
                    std::chrono::milliseconds timeout = std::chrono::seconds(30));
  // Serves the delivery reports that are ready; never blocks.
  void Poll();
  // Waits until every queued record is delivered or has failed.
  absl::Status Flush(std::chrono::milliseconds timeout);

  int64_t delivered() const { return delivered_; }
  int64_t failed() const { return failed_; }
  // Records acknowledged by the cluster, per partition of `topic`.
  int64_t DeliveredTo(const std::string& topic, int partition) const;
  // The first delivery error, empty while none happened.
  const std::string& first_error() const { return first_error_; }

 private:
  RecordProducer() = default;
  void OnDelivery(const Delivery& delivery);

  std::unique_ptr<Producer> producer_;
  int64_t delivered_ = 0;
  int64_t failed_ = 0;
  std::string first_error_;
  std::map<std::pair<std::string, int>, int64_t> delivered_by_partition_;
};

}  // namespace tempest::kafka

#endif  // TEMPEST_COMMON_KAFKA_RECORD_PRODUCER_H_
