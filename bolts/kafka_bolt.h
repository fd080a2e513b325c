#ifndef TEMPEST_BOLTS_KAFKA_BOLT_H_
#define TEMPEST_BOLTS_KAFKA_BOLT_H_

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "common/api/bolt.h"
#include "common/api/component_registry.h"
#include "common/core/rate_limited_log.h"
#include "common/kafka/producer.h"

namespace tempest::bolts {

// Settings of a KafkaBolt (Flux properties).
struct KafkaBoltOptions {
  std::string bootstrap_servers;  // required
  std::string topic;              // required
  std::string field = "value";    // the message value
  std::string key_field;          // the message key; empty: no key
  // How long Cleanup waits for outstanding deliveries before failing them.
  std::chrono::milliseconds flush_timeout{10000};
  // Every other property (a `kafka.` prefix is dropped), for librdkafka.
  std::map<std::string, std::string> producer_properties;

  static absl::StatusOr<KafkaBoltOptions> FromArgs(const api::ComponentArgs& args);
};

// `tempest.KafkaBolt`: writes one field of each input (and optionally another
// as the key) as a message to a Kafka topic, with an idempotent producer
// (enable.idempotence=true, acks=all), so the producer's own retries never
// duplicate or reorder messages. The input tuple rides along as the message
// opaque and is acked only when its delivery report says the message is
// stored, and failed when the report carries an error, so the spout replays
// it: at-least-once into Kafka (a replay after a lost report writes again).
//
// Values are written as they are for strings and bytes, as decimal text for
// numbers, "true"/"false" for booleans; nil is a null value (a tombstone) or
// no key. An input without the field, or with a list or map in it, is failed
// and reported (the first few times), never written.
//
// Produce calls only enqueue: librdkafka batches (linger.ms) on its own
// threads; delivery reports are served by Poll, which the executor calls
// after each batch of input and every few milliseconds while idle, all on the
// executor thread. A fatal producer error (possible with idempotence) fails
// everything outstanding and replaces the producer. Cleanup flushes for at
// most `flushTimeoutMs`, then fails what is still undelivered.
//
// Owns the producer and a reference to each in-flight input. Lives on its
// bolt executor thread.
class KafkaBolt final : public api::Bolt {
 public:
  static absl::StatusOr<std::unique_ptr<KafkaBolt>> Create(const api::ComponentArgs& args);
  explicit KafkaBolt(KafkaBoltOptions options) : options_(std::move(options)) {}
  ~KafkaBolt() override;
  KafkaBolt(const KafkaBolt&) = delete;
  KafkaBolt& operator=(const KafkaBolt&) = delete;

  absl::Status Prepare(const api::Config& config, const api::TopologyContext& context,
                       api::OutputCollector& collector) override;
  void Execute(const api::Tuple& input) override;
  std::optional<std::chrono::milliseconds> PollInterval() const override;
  bool Poll() override;
  void Cleanup() override;
  void DeclareOutputFields(api::OutputFieldsDeclarer& declarer) const override;

  const KafkaBoltOptions& options() const { return options_; }
  int64_t delivered() const { return delivered_; }
  int64_t delivery_failures() const { return delivery_failures_; }
  int64_t rejected_inputs() const { return rejected_inputs_; }
  int64_t in_flight() const { return in_flight_; }

 private:
  // Every delivery outcome lands here (inside Poll, Flush or Execute's
  // waits, on the executor thread).
  void OnDelivery(const kafka::Delivery& delivery);
  absl::Status CreateProducer();
  // Enqueues `record` (its value and key) for `input`, waiting up to a
  // second for room in a full local queue; fails `input` when it cannot.
  void Enqueue(const api::Tuple& input, kafka::OutgoingRecord& record);
  // Fails every outstanding input, then destroys the producer.
  void DestroyProducer();
  void RecoverFromFatalError();
  // Reports the first few problems of each kind to the collector (which
  // logs them too); of the rest only one in 1000 is logged.
  // Reports `problem` unless `log` holds it back (then only counted).
  void ReportLimited(core::RateLimitedLog& log, const absl::Status& problem);

  const KafkaBoltOptions options_;
  std::map<std::string, std::string> producer_config_;  // resolved at Prepare
  std::string name_;                                    // "component[task]" for messages
  api::OutputCollector* collector_ = nullptr;
  std::unique_ptr<kafka::Producer> producer_;  // with options_.topic open
  // Set while the bolt is destroyed without Cleanup: reports only free.
  bool collector_gone_ = false;

  int64_t in_flight_ = 0;
  int64_t delivered_ = 0;
  int64_t delivery_failures_ = 0;
  int64_t rejected_inputs_ = 0;
  // Per kind of problem: 10 reports per minute, then one with the count.
  core::RateLimitedLog missing_field_reports_{10, std::chrono::minutes(1)};
  core::RateLimitedLog bad_value_reports_{10, std::chrono::minutes(1)};
  core::RateLimitedLog delivery_error_reports_{10, std::chrono::minutes(1)};
  core::RateLimitedLog enqueue_error_reports_{10, std::chrono::minutes(1)};
};

}  // namespace tempest::bolts

#endif  // TEMPEST_BOLTS_KAFKA_BOLT_H_
