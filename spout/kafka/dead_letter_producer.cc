#include "spout/kafka/dead_letter_producer.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "common/core/status_macros.h"
#include "common/kafka/conf.h"

namespace tempest::spout {

DeadLetterProducer::DeadLetterProducer(std::string topic, OutcomeCallback on_outcome)
    : topic_(std::move(topic)), on_outcome_(std::move(on_outcome)) {}

absl::StatusOr<std::unique_ptr<DeadLetterProducer>> DeadLetterProducer::Create(
    const std::string& bootstrap_servers, const std::string& spout_id, std::string topic,
    OutcomeCallback on_outcome) {
  const kafka::Settings settings = {
      {"bootstrap.servers", bootstrap_servers},
      {"client.id", absl::StrCat("tempest-kafka-spout-dlq-", spout_id)},
      // Retries without duplicates or reordering.
      {"enable.idempotence", "true"},
      {"linger.ms", "5"},
      {"log_level", "3"},
  };
  ASSIGN_OR_RETURN(kafka::ConfHandle conf,
                   kafka::BuildConf(settings, "dead-letter producer $0: $1"));
  auto dead_letter = std::unique_ptr<DeadLetterProducer>(
      new DeadLetterProducer(std::move(topic), std::move(on_outcome)));
  absl::StatusOr<std::unique_ptr<kafka::Producer>> producer = kafka::Producer::Create(
      std::move(conf),
      [self = dead_letter.get()](const kafka::Delivery& d) { self->OnDelivery(d); });
  if (!producer.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("dead-letter producer: ", producer.status().message()));
  }
  dead_letter->producer_ = *std::move(producer);
  return dead_letter;
}

DeadLetterProducer::~DeadLetterProducer() {
  producer_->Flush(std::chrono::milliseconds(2000));
}

bool DeadLetterProducer::Send(const TopicPartition& source, const RecordWindow::Record& record,
                              const Ref& ref) {
  const std::string offset_text = absl::StrCat(ref.offset);
  const std::string partition_text = absl::StrCat(source.partition);
  kafka::OutgoingRecord out;
  out.topic = topic_;
  if (record.has_key) out.key = record.key;
  if (record.has_value) out.value = record.value;
  out.headers = {
      {"tempest.source.topic", source.topic},
      {"tempest.source.partition", partition_text},
      {"tempest.source.offset", offset_text},
  };
  auto owned_ref = std::make_unique<Ref>(ref);
  out.opaque = owned_ref.get();
  if (!producer_->Produce(out).ok()) return false;
  (void)owned_ref.release();  // back in OnDelivery
  return true;
}

void DeadLetterProducer::Poll() { producer_->Poll(); }

void DeadLetterProducer::OnDelivery(const kafka::Delivery& delivery) {
  std::unique_ptr<Ref> ref(static_cast<Ref*>(delivery.opaque));
  if (ref && on_outcome_) on_outcome_(*ref, delivery.error);
}

}  // namespace tempest::spout
