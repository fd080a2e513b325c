#include "common/kafka/record_producer.h"

#include "absl/strings/str_cat.h"
#include "common/core/status_macros.h"
#include "common/kafka/conf.h"

namespace tempest::kafka {

absl::StatusOr<std::unique_ptr<RecordProducer>> RecordProducer::Create(
    const std::string& bootstrap_servers) {
  auto record_producer = std::unique_ptr<RecordProducer>(new RecordProducer());
  ASSIGN_OR_RETURN(ConfHandle conf,
                   BuildConf(
                       {
                           {"bootstrap.servers", bootstrap_servers},
                           {"enable.idempotence", "true"},
                           {"acks", "all"},
                           {"linger.ms", "2"},
                           // Long enough to ride out a broker outage of a study scenario.
                           {"message.timeout.ms", "120000"},
                           // Connection errors during a broker outage are expected and retried;
                           // a record that still fails is reported by Flush.
                           {"log_level", "2"},
                       },
                       "producer setting $0: $1"));
  absl::StatusOr<std::unique_ptr<Producer>> producer = Producer::Create(
      std::move(conf), [self = record_producer.get()](const Delivery& d) { self->OnDelivery(d); });
  if (!producer.ok()) {
    return absl::InternalError(
        absl::StrCat("cannot create a Kafka producer: ", producer.status().message()));
  }
  record_producer->producer_ = *std::move(producer);
  return record_producer;
}

RecordProducer::~RecordProducer() {
  if (producer_ != nullptr) producer_->Flush(std::chrono::milliseconds(2000));
}

void RecordProducer::OnDelivery(const Delivery& delivery) {
  if (delivery.ok) {
    ++delivered_;
    ++delivered_by_partition_[{std::string(delivery.topic), delivery.partition}];
  } else {
    ++failed_;
    if (first_error_.empty()) first_error_ = std::string(delivery.error);
  }
}

absl::Status RecordProducer::Send(const std::string& topic, int partition, std::string_view key,
                                  std::string_view value, std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  OutgoingRecord record;
  record.topic = topic;
  record.partition = partition;
  if (!key.empty()) record.key = key;
  record.value = value;
  for (;;) {
    absl::Status produced = producer_->Produce(record);
    if (produced.ok()) return absl::OkStatus();
    if (!absl::IsResourceExhausted(produced)) {
      return absl::UnavailableError(absl::StrCat("produce to ", topic, ": ", produced.message()));
    }
    if (std::chrono::steady_clock::now() > deadline) {
      return absl::DeadlineExceededError(
          absl::StrCat("produce to ", topic, ": the local queue stayed full for ",
                       timeout.count(), " ms"));
    }
    producer_->Poll(std::chrono::milliseconds(10));  // delivery reports make room
  }
}

void RecordProducer::Poll() { producer_->Poll(); }

absl::Status RecordProducer::Flush(std::chrono::milliseconds timeout) {
  if (!producer_->Flush(timeout)) {
    return absl::DeadlineExceededError(absl::StrCat(producer_->OutstandingRecords(),
                                                    " records still undelivered after ",
                                                    timeout.count(), " ms"));
  }
  if (failed_ > 0) {
    return absl::UnavailableError(
        absl::StrCat(failed_, " records failed delivery; first error: ", first_error_));
  }
  return absl::OkStatus();
}

int64_t RecordProducer::DeliveredTo(const std::string& topic, int partition) const {
  auto it = delivered_by_partition_.find({topic, partition});
  return it == delivered_by_partition_.end() ? 0 : it->second;
}

}  // namespace tempest::kafka
