#include "bolts/kafka_bolt.h"

#include <algorithm>
#include <charconv>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "bolts/bolt_args.h"
#include "common/api/config.h"
#include "common/api/string_view_compat.h"
#include "common/core/status_macros.h"
#include "common/kafka/conf.h"
#include "spdlog/spdlog.h"

namespace tempest::bolts {
namespace {

using api::Sv;
using std::chrono::milliseconds;

constexpr char kClass[] = "tempest.KafkaBolt";
constexpr auto kPollInterval = milliseconds(5);
// A full local queue (queue.buffering.max.*) makes Execute wait, serving
// delivery reports, this long before it fails the input for a later replay.
constexpr auto kEnqueueWait = milliseconds(1000);
constexpr auto kPurgeWait = milliseconds(1000);

bool IsOwnProperty(std::string_view name) {
  return name == "topic" || name == "field" || name == "keyField" || name == "flushTimeoutMs";
}

// Builds a producer configuration; InvalidArgument names the property that
// librdkafka rejected.
absl::StatusOr<kafka::ConfHandle> BuildConf(const kafka::Settings& properties) {
  return kafka::BuildConf(properties, absl::StrCat(kClass, " property '$0': $1"));
}

// The message bytes of one value. `data` is null for a nil value.
struct Encoded {
  const char* data = nullptr;
  size_t size = 0;
  std::string text;  // backing store for numbers and booleans
};

absl::Status Encode(const api::Value& value, Encoded& out) {
  out.data = nullptr;
  out.size = 0;
  switch (value.type()) {
    case api::Value::Type::kNil:
      return absl::OkStatus();
    case api::Value::Type::kString:
      out.data = value.AsString().data();
      out.size = value.AsString().size();
      return absl::OkStatus();
    case api::Value::Type::kBytes:
      out.data = value.AsBytes().data();
      out.size = value.AsBytes().size();
      return absl::OkStatus();
    case api::Value::Type::kInt:
      out.text = absl::StrCat(value.AsInt());
      break;
    case api::Value::Type::kDouble: {
      // Shortest text that reads back as the same double.
      char buf[64];
      auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), value.AsDouble());
      out.text.assign(buf, ec == std::errc() ? end : buf);
      break;
    }
    case api::Value::Type::kBool:
      out.text = value.AsBool() ? "true" : "false";
      break;
    default:
      return absl::InvalidArgumentError(
          absl::StrCat("is a ", Sv(api::Value::TypeName(value.type())),
                       "; KafkaBolt writes strings, bytes, numbers and booleans"));
  }
  out.data = out.text.data();
  out.size = out.text.size();
  return absl::OkStatus();
}

// The producer properties (every property but the bolt's own, a "kafka."
// prefix dropped), each a scalar.
absl::Status ReadProducerProperties(const api::ComponentArgs& args,
                                    std::map<std::string, std::string>& out) {
  for (const auto& [name, value] : args.properties) {
    if (IsOwnProperty(name)) continue;
    if (!value.is_string() && !value.is_int() && !value.is_double() && !value.is_bool()) {
      return absl::InvalidArgumentError(
          absl::StrCat(kClass, " property '", name, "' must be a scalar"));
    }
    std::string key = absl::StartsWith(name, "kafka.") ? name.substr(6) : name;
    out[key] = ValueAsLine(value);
  }
  return absl::OkStatus();
}

// Idempotence is what keeps producer retries from duplicating; it needs
// acks from all in-sync replicas. Misspelt or malformed librdkafka
// properties are caught here too, at validation time.
absl::Status CheckIdempotentProducer(const std::map<std::string, std::string>& properties) {
  if (auto it = properties.find("enable.idempotence");
      it != properties.end() && it->second != "true") {
    return absl::InvalidArgumentError(
        absl::StrCat(kClass, " always uses an idempotent producer; 'enable.idempotence' cannot be ",
                     it->second));
  }
  for (const char* acks : {"acks", "request.required.acks"}) {
    if (auto it = properties.find(acks);
        it != properties.end() && it->second != "all" && it->second != "-1") {
      return absl::InvalidArgumentError(
          absl::StrCat(kClass, " needs acks=all for its idempotent producer; '", acks,
                       "' cannot be ", it->second));
    }
  }
  return BuildConf(properties).status();
}

}  // namespace

absl::StatusOr<KafkaBoltOptions> KafkaBoltOptions::FromArgs(const api::ComponentArgs& args) {
  if (!args.constructor_args.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(kClass, " takes no constructorArgs; use properties"));
  }
  KafkaBoltOptions o;
  ASSIGN_OR_RETURN(std::string topic, args.StringProperty("topic", ""));
  ASSIGN_OR_RETURN(std::string field, args.StringProperty("field", o.field));
  ASSIGN_OR_RETURN(std::string key_field, args.StringProperty("keyField", ""));
  ASSIGN_OR_RETURN(const int64_t flush,
                   args.IntProperty("flushTimeoutMs", o.flush_timeout.count()));
  if (topic.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(kClass, " needs property 'topic'"));
  }
  if (field.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(kClass, " property 'field' is empty"));
  }
  if (flush < 0 || flush > 600'000) {
    return absl::InvalidArgumentError(
        absl::StrCat(kClass, " property 'flushTimeoutMs' must be in [0, 600000]; got ", flush));
  }
  RETURN_IF_ERROR(ReadProducerProperties(args, o.producer_properties));
  auto bootstrap = o.producer_properties.find("bootstrap.servers");
  if (bootstrap == o.producer_properties.end() || bootstrap->second.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(kClass, " needs property 'bootstrap.servers'"));
  }
  RETURN_IF_ERROR(CheckIdempotentProducer(o.producer_properties));

  o.bootstrap_servers = bootstrap->second;
  o.topic = std::move(topic);
  o.field = std::move(field);
  o.key_field = std::move(key_field);
  o.flush_timeout = milliseconds(flush);
  return o;
}

absl::StatusOr<std::unique_ptr<KafkaBolt>> KafkaBolt::Create(const api::ComponentArgs& args) {
  ASSIGN_OR_RETURN(KafkaBoltOptions options, KafkaBoltOptions::FromArgs(args));
  return std::make_unique<KafkaBolt>(std::move(options));
}

KafkaBolt::~KafkaBolt() {
  // Without Cleanup the collector may be gone: only free the references.
  collector_gone_ = true;
  DestroyProducer();
}

absl::Status KafkaBolt::Prepare(const api::Config& config, const api::TopologyContext& context,
                                api::OutputCollector& collector) {
  collector_ = &collector;
  name_ = absl::StrCat(context.ThisComponentId().value(), "[", context.ThisTaskId().value(), "]");
  producer_config_ = {
      {"client.id", absl::StrCat("tempest-kafka-bolt-", name_)},
      {"linger.ms", "5"},
      {"log_level", "3"},  // librdkafka logs to stderr; errors reach us as reports
  };
  // A delivery outcome later than the tuple's own timeout is of no use: the
  // spout has replayed it by then.
  const int64_t tuple_timeout_ms = config.GetInt(api::kTopologyMessageTimeoutSecs, 30) * 1000;
  if (tuple_timeout_ms > 0) {
    producer_config_["message.timeout.ms"] =
        absl::StrCat(std::min<int64_t>(tuple_timeout_ms, 300'000));
  }
  for (const auto& [k, v] : options_.producer_properties) producer_config_[k] = v;
  producer_config_["enable.idempotence"] = "true";
  producer_config_["acks"] = "all";
  producer_config_.erase("request.required.acks");  // an alias of acks
  return CreateProducer();
}

absl::Status KafkaBolt::CreateProducer() {
  ASSIGN_OR_RETURN(kafka::ConfHandle conf, BuildConf(producer_config_));
  absl::StatusOr<std::unique_ptr<kafka::Producer>> producer = kafka::Producer::Create(
      std::move(conf), [this](const kafka::Delivery& delivery) { OnDelivery(delivery); });
  if (!producer.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat(kClass, " ", name_, ": producer: ", producer.status().message()));
  }
  if (absl::Status opened = (*producer)->OpenTopic(options_.topic); !opened.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(kClass, " ", name_, ": topic '", options_.topic,
                                                   "': ", opened.message()));
  }
  producer_ = *std::move(producer);
  return absl::OkStatus();
}

void KafkaBolt::Execute(const api::Tuple& input) {
  if (input.IsTick()) {
    collector_->Ack(input);
    return;
  }
  const api::Value* value = input.Find(options_.field);
  const api::Value* key = options_.key_field.empty() ? nullptr : input.Find(options_.key_field);
  if (value == nullptr || (!options_.key_field.empty() && key == nullptr)) {
    ++rejected_inputs_;
    const std::string& missing = value == nullptr ? options_.field : options_.key_field;
    ReportLimited(missing_field_reports_,
                  absl::InvalidArgumentError(absl::StrCat(
                      kClass, " ", name_, ": input from ", input.source_component().value(), ":",
                      input.source_stream().value(), " has no field '", missing, "' (it has ",
                      input.fields().DebugString(), "); set 'field' / 'keyField'")));
    collector_->Fail(input);
    return;
  }
  Encoded v, k;
  absl::Status encoded = Encode(*value, v);
  if (encoded.ok() && key != nullptr) encoded = Encode(*key, k);
  if (!encoded.ok()) {
    ++rejected_inputs_;
    ReportLimited(bad_value_reports_, absl::InvalidArgumentError(absl::StrCat(
                                          kClass, " ", name_, ": field '",
                                          encoded.ok() ? options_.field : options_.key_field,
                                          "' of ", input.DebugString(), " ", encoded.message())));
    collector_->Fail(input);
    return;
  }
  if (producer_ == nullptr) {  // a fatal error could not be recovered from
    collector_->Fail(input);
    return;
  }
  kafka::OutgoingRecord record;
  record.topic = options_.topic;
  if (v.data != nullptr) record.value = std::string_view(v.data, v.size);
  if (k.data != nullptr) record.key = std::string_view(k.data, k.size);
  Enqueue(input, record);
}

void KafkaBolt::Enqueue(const api::Tuple& input, kafka::OutgoingRecord& record) {
  auto ref = std::make_unique<api::Tuple>(input);
  record.opaque = ref.get();
  const auto give_up = std::chrono::steady_clock::now() + kEnqueueWait;
  for (;;) {
    const absl::Status produced = producer_->Produce(record);
    if (produced.ok()) {
      (void)ref.release();  // back in OnDelivery
      ++in_flight_;
      return;
    }
    if (absl::IsResourceExhausted(produced) && std::chrono::steady_clock::now() < give_up) {
      producer_->Poll(milliseconds(10));  // serves reports, which frees room
      continue;
    }
    ++delivery_failures_;
    ReportLimited(enqueue_error_reports_, absl::UnavailableError(absl::StrCat(
                                              kClass, " ", name_, ": cannot enqueue to '",
                                              options_.topic, "': ", produced.message())));
    collector_->Fail(input);
    if (absl::IsFailedPrecondition(produced)) RecoverFromFatalError();  // a fatal error
    return;
  }
}

std::optional<milliseconds> KafkaBolt::PollInterval() const { return kPollInterval; }

bool KafkaBolt::Poll() {
  if (producer_ == nullptr) {
    // A fatal error left no producer; try again to make one.
    if (CreateProducer().ok()) spdlog::info("KafkaBolt {}: producer recreated", name_);
    return false;
  }
  const int served = producer_->Poll();
  if (!producer_->FatalError().empty()) {
    RecoverFromFatalError();
    return true;
  }
  return served > 0;
}

void KafkaBolt::OnDelivery(const kafka::Delivery& delivery) {
  std::unique_ptr<api::Tuple> input(static_cast<api::Tuple*>(delivery.opaque));
  if (!input) return;
  --in_flight_;
  if (collector_gone_) return;
  if (delivery.ok) {
    ++delivered_;
    collector_->Ack(*input);
    return;
  }
  ++delivery_failures_;
  ReportLimited(delivery_error_reports_,
                absl::UnavailableError(absl::StrCat(
                    kClass, " ", name_, ": delivery to '", options_.topic, "' failed (",
                    Sv(delivery.error), "); the input is failed for a replay")));
  collector_->Fail(*input);
}

void KafkaBolt::RecoverFromFatalError() {
  const std::string err = producer_->FatalError();
  const absl::Status fatal = absl::InternalError(
      absl::StrCat(kClass, " ", name_, ": fatal producer error (", err, "); failing ", in_flight_,
                   " outstanding inputs and recreating the producer"));
  spdlog::error("{}", fatal.ToString());
  if (!collector_gone_) collector_->ReportError(fatal);
  DestroyProducer();
  absl::Status created = CreateProducer();
  if (!created.ok()) spdlog::error("KafkaBolt {}: {}", name_, created.ToString());
}

void KafkaBolt::DestroyProducer() {
  if (producer_ == nullptr) return;
  // Purged messages get their delivery reports (errors) from later polls;
  // in-flight ones as their requests are abandoned, so wait a little.
  producer_->Purge();
  const auto give_up = std::chrono::steady_clock::now() + kPurgeWait;
  do {
    producer_->Poll(milliseconds(in_flight_ > 0 ? 10 : 0));
  } while (in_flight_ > 0 && std::chrono::steady_clock::now() < give_up);
  if (in_flight_ > 0) {
    spdlog::warn(
        "KafkaBolt {}: {} messages without a delivery report at close; their inputs "
        "time out and are replayed",
        name_, in_flight_);
    in_flight_ = 0;
  }
  producer_.reset();
}

void KafkaBolt::Cleanup() {
  if (producer_ != nullptr) {
    // Serves delivery reports (acks and fails) while it waits.
    producer_->Flush(options_.flush_timeout);
  }
  DestroyProducer();
  spdlog::info("KafkaBolt {}: {} delivered, {} delivery failures, {} inputs rejected", name_,
               delivered_, delivery_failures_, rejected_inputs_);
}

void KafkaBolt::ReportLimited(core::RateLimitedLog& log, const absl::Status& problem) {
  uint64_t held = 0;
  if (!log.Allow(&held)) return;
  const absl::Status report =
      held == 0 ? problem
                : absl::Status(problem.code(), absl::StrCat(problem.message(), " (", held,
                                                            " more held back since the last "
                                                            "report)"));
  // The runtime logs reported errors itself.
  if (collector_gone_) {
    spdlog::warn("{}", report.ToString());
  } else {
    collector_->ReportError(report);
  }
}

void KafkaBolt::DeclareOutputFields(api::OutputFieldsDeclarer& declarer) const {
  // A sink: no output. Its inputs must carry the value and key it writes.
  std::vector<std::string> reads = {options_.field};
  if (!options_.key_field.empty()) reads.push_back(options_.key_field);
  declarer.RequireInputFields(std::move(reads), "set its 'field' / 'keyField' properties");
}

}  // namespace tempest::bolts
