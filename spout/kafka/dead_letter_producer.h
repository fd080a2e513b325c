#ifndef TEMPEST_SPOUT_DEAD_LETTER_PRODUCER_H_
#define TEMPEST_SPOUT_DEAD_LETTER_PRODUCER_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "common/kafka/producer.h"
#include "spout/kafka/offsets/partition_assignment.h"
#include "spout/kafka/record_window.h"

namespace tempest::spout {

// The KafkaSpout's dead-letter producer: sends a record that exhausted its
// retries to the dead-letter topic, key and value unchanged, with headers
// naming its source (tempest.source.topic, .partition, .offset). Idempotent,
// so librdkafka's retries neither duplicate nor reorder.
//
// Executor thread only: Send and Poll run there, and the outcome callback
// runs inside Poll (and inside the destructor's flush).
class DeadLetterProducer {
 public:
  // Which record an outcome is about (the spout's partition slot and
  // ownership epoch at the time of sending).
  struct Ref {
    int slot;
    uint32_t epoch;
    int64_t offset;
  };
  // `error` is empty when the record was delivered.
  using OutcomeCallback = std::function<void(const Ref& ref, std::string_view error)>;

  static absl::StatusOr<std::unique_ptr<DeadLetterProducer>> Create(
      const std::string& bootstrap_servers, const std::string& spout_id, std::string topic,
      OutcomeCallback on_outcome);
  // Waits up to 2 s for outstanding records (their outcomes are reported).
  ~DeadLetterProducer();
  DeadLetterProducer(const DeadLetterProducer&) = delete;
  DeadLetterProducer& operator=(const DeadLetterProducer&) = delete;

  // Queues `record` (offset `ref.offset` of `source`); false if it could not
  // be queued, and then no outcome follows: the caller retries later.
  bool Send(const TopicPartition& source, const RecordWindow::Record& record, const Ref& ref);
  // Serves ready outcomes; never blocks.
  void Poll();

 private:
  DeadLetterProducer(std::string topic, OutcomeCallback on_outcome);
  void OnDelivery(const kafka::Delivery& delivery);

  std::string topic_;
  OutcomeCallback on_outcome_;
  std::unique_ptr<kafka::Producer> producer_;
};

}  // namespace tempest::spout

#endif  // TEMPEST_SPOUT_DEAD_LETTER_PRODUCER_H_
