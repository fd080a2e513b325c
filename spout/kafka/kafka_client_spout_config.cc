#include "spout/kafka/kafka_client_spout_config.h"

#include <algorithm>
#include <cctype>
#include <set>
#include <string_view>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "common/core/status_macros.h"

namespace tempest::spout {
namespace {

using api::Value;
using api::ValueList;
using api::ValueMap;

constexpr char kConfigClass[] = "org.apache.storm.kafka.spout.KafkaSpoutConfig";
constexpr char kBuilderClass[] = "org.apache.storm.kafka.spout.KafkaSpoutConfig$Builder";
constexpr char kBackoffClass[] = "org.apache.storm.kafka.spout.KafkaSpoutRetryExponentialBackoff";
constexpr char kTimeIntervalClass[] =
    "org.apache.storm.kafka.spout.KafkaSpoutRetryExponentialBackoff$TimeInterval";
constexpr char kDefaultTranslatorClass[] = "org.apache.storm.kafka.spout.DefaultRecordTranslator";
// Storm's flux-examples ship it; any package's class of this name means the same.
constexpr char kOnlyValueTranslatorName[] = "OnlyValueRecordTranslator";

// Consumer settings of the Java client that librdkafka has no counterpart
// for, or that the spout sets itself: accepted and not passed on.
constexpr std::string_view kJavaOnlyConsumerKeys[] = {
    "key.deserializer", "value.deserializer", "max.poll.records", "request.timeout.ms",
    "default.api.timeout.ms", "retry.backoff.ms", "interceptor.classes"};

absl::Status Bad(absl::string_view what, absl::string_view why) {
  return absl::InvalidArgumentError(absl::StrCat("KafkaSpoutConfig$Builder ", what, ": ", why));
}

std::string ClassOf(const Value& bean) {
  const Value* cls = bean.Find("className");
  return cls != nullptr && cls->is_string() ? cls->AsString() : std::string();
}

const ValueList* ListField(const Value& bean, const char* field) {
  const Value* v = bean.Find(field);
  return v == nullptr ? nullptr : v->TryList();
}

// Java enum constants arrive as names, possibly qualified
// ("KafkaSpoutConfig$ProcessingGuarantee.AT_LEAST_ONCE").
absl::StatusOr<std::string> EnumName(const Value& v) {
  ASSIGN_OR_RETURN(const std::string s, v.CoerceString());
  std::string name(absl::StripAsciiWhitespace(s));
  if (size_t dot = name.rfind('.'); dot != std::string::npos) name = name.substr(dot + 1);
  return absl::AsciiStrToUpper(name);
}

absl::StatusOr<int64_t> IntAtLeast(const Value& v, int64_t min) {
  ASSIGN_OR_RETURN(const int64_t i, v.CoerceInt());
  if (i < min) return absl::InvalidArgumentError(absl::StrCat("must be >= ", min, ", got ", i));
  return i;
}

// TimeInterval(length, TimeUnit) or its factories seconds(n) / milliseconds(n)
// / microSeconds(n), in ms.
absl::StatusOr<int64_t> TimeIntervalMs(const Value& bean) {
  if (ClassOf(bean) != kTimeIntervalClass) {
    return absl::InvalidArgumentError(absl::StrCat("expected a ", kTimeIntervalClass));
  }
  std::string unit;
  const Value* length = nullptr;
  const Value* props = bean.Find("properties");
  const Value* factory = props != nullptr ? props->Find("factory") : nullptr;
  if (factory != nullptr) {
    ASSIGN_OR_RETURN(const std::string f, factory->CoerceString());
    unit = absl::AsciiStrToUpper(f);
    const Value* fargs = props->Find("factoryArgs");
    if (fargs == nullptr || !fargs->is_list() || fargs->AsList().size() != 1) {
      return absl::InvalidArgumentError(absl::StrCat("TimeInterval.", f, " takes one argument"));
    }
    length = &fargs->AsList()[0];
  } else {
    const ValueList* ctor = ListField(bean, "constructorArgs");
    if (ctor == nullptr || ctor->size() != 2) {
      return absl::InvalidArgumentError("TimeInterval takes (length, TimeUnit)");
    }
    length = &(*ctor)[0];
    ASSIGN_OR_RETURN(unit, EnumName((*ctor)[1]));
  }
  ASSIGN_OR_RETURN(const int64_t n, IntAtLeast(*length, 0));
  if (unit == "SECONDS") return n * 1000;
  if (unit == "MILLISECONDS") return n;
  if (unit == "MICROSECONDS") return n / 1000;
  if (unit == "MINUTES") return n * 60'000;
  return absl::InvalidArgumentError(absl::StrCat("unsupported time unit '", unit, "'"));
}

// KafkaSpoutRetryExponentialBackoff(initialDelay, delayPeriod, maxRetries, maxDelay).
absl::Status ApplyRetry(KafkaSpoutConfig& c, const Value& bean) {
  if (ClassOf(bean) != kBackoffClass) {
    return Bad("retry", absl::StrCat("supported: ", kBackoffClass, ", got '", ClassOf(bean), "'"));
  }
  const ValueList* ctor = ListField(bean, "constructorArgs");
  if (ctor == nullptr || ctor->size() != 4) {
    return Bad("retry",
               "KafkaSpoutRetryExponentialBackoff takes (initialDelay, delayPeriod, maxRetries, "
               "maxDelay)");
  }
  absl::StatusOr<int64_t> initial = TimeIntervalMs((*ctor)[0]);
  absl::StatusOr<int64_t> period = TimeIntervalMs((*ctor)[1]);
  absl::StatusOr<int64_t> retries = IntAtLeast((*ctor)[2], 0);
  absl::StatusOr<int64_t> max_delay = TimeIntervalMs((*ctor)[3]);
  for (const absl::Status& s :
       {initial.status(), period.status(), retries.status(), max_delay.status()}) {
    if (!s.ok()) return Bad("retry", s.message());
  }
  c.retry.retry_initial_delay_ms = *initial;
  c.retry.retry_delay_period_ms = *period;
  c.retry.retry_delay_multiplier = 2.0;
  c.retry.retry_delay_max_ms = std::max(*max_delay, *initial);
  // Integer.MAX_VALUE is storm-kafka-client's "no limit". A finite limit
  // never skips a record here: past it the record goes to deadLetterTopic,
  // or stalls its partition visibly (spout/README.md, Retries).
  // maxRetries counts retries, retry_limit failed deliveries.
  c.retry.retry_limit =
      *retries >= 2147483647 ? -1 : static_cast<int>(std::min<int64_t>(*retries + 1, 1 << 30));
  return absl::OkStatus();
}

absl::Status ApplyTranslator(KafkaSpoutConfig& c, const Value& bean) {
  const std::string cls = ClassOf(bean);
  if (cls == kDefaultTranslatorClass) {
    c.scheme = RecordScheme::kRecord;
    return absl::OkStatus();
  }
  if (cls == kOnlyValueTranslatorName || absl::EndsWith(cls, absl::StrCat(".", kOnlyValueTranslatorName))) {
    c.scheme = RecordScheme::kValue;
    return absl::OkStatus();
  }
  return Bad("recordTranslator",
             absl::StrCat("'", cls,
                          "' runs Java code; supported: DefaultRecordTranslator (fields topic, "
                          "partition, offset, key, value) and OnlyValueRecordTranslator (field "
                          "value)"));
}

absl::Status ApplyKafkaProp(KafkaSpoutConfig& c, const std::string& key, const Value& value) {
  absl::StatusOr<std::string> v = value.CoerceString();
  if (!v.ok()) return Bad(absl::StrCat("prop '", key, "'"), v.status().message());
  if (key == "group.id") {
    c.group_id = *v;
    return absl::OkStatus();
  }
  if (key == "enable.auto.commit") {
    return Bad("prop 'enable.auto.commit'",
               "not supported (as in Storm): the spout commits what its tuples finished; choose "
               "setProcessingGuarantee instead");
  }
  if (key == "auto.offset.reset") {
    const std::string p = absl::AsciiStrToLower(*v);
    if (p == "earliest") c.out_of_range = OutOfRangePolicy::kEarliest;
    else if (p == "latest") c.out_of_range = OutOfRangePolicy::kLatest;
    else if (p == "none") c.out_of_range = OutOfRangePolicy::kFail;
    else return Bad("prop 'auto.offset.reset'", "earliest, latest or none");
    return absl::OkStatus();
  }
  if (key == "bootstrap.servers") {
    c.bootstrap_servers = *v;
    return absl::OkStatus();
  }
  for (std::string_view ignored : kJavaOnlyConsumerKeys) {
    if (key == ignored) return absl::OkStatus();
  }
  // Everything else is a consumer setting librdkafka knows by the same name
  // (session.timeout.ms, fetch.min.bytes, client.id, security.protocol...);
  // librdkafka rejects the rest at open, naming the key.
  c.kafka_properties[key] = *v;
  return absl::OkStatus();
}

// setProp(key, value) or setProp(map of settings).
absl::Status ApplyProps(KafkaSpoutConfig& c, const ValueList& args) {
  if (args.size() == 2) {
    absl::StatusOr<std::string> key = args[0].CoerceString();
    if (!key.ok()) return Bad("setProp", key.status().message());
    return ApplyKafkaProp(c, *key, args[1]);
  }
  if (args.size() == 1 && args[0].is_map()) {
    for (const auto& [key, value] : args[0].AsMap()) {
      RETURN_IF_ERROR(ApplyKafkaProp(c, key, value));
    }
    return absl::OkStatus();
  }
  return Bad("setProp", "takes (key, value) or one map of settings");
}

absl::Status SetGroupId(KafkaSpoutConfig& c, absl::string_view name, const Value& v) {
  absl::StatusOr<std::string> g = v.CoerceString();
  if (!g.ok() || g->empty()) return Bad(name, "must be a non-empty string");
  c.group_id = *g;
  return absl::OkStatus();
}

absl::Status SetFirstPollOffsetStrategy(KafkaSpoutConfig& c, absl::string_view name,
                                        const Value& v) {
  absl::StatusOr<std::string> s = EnumName(v);
  if (!s.ok()) return Bad(name, s.status().message());
  // storm-kafka-client's rule maps onto startOffsetTime / ignoreZkOffsets:
  // EARLIEST / LATEST ignore a commit made by an earlier deployment.
  if (*s == "EARLIEST" || *s == "LATEST" || *s == "UNCOMMITTED_EARLIEST" ||
      *s == "UNCOMMITTED_LATEST") {
    c.start_offset_time = absl::EndsWith(*s, "EARLIEST") ? -2 : -1;
    c.ignore_zk_offsets = !absl::StartsWith(*s, "UNCOMMITTED_");
    return absl::OkStatus();
  }
  return Bad(name, absl::StrCat("'", *s,
                                "' is not supported (EARLIEST, LATEST, UNCOMMITTED_EARLIEST, "
                                "UNCOMMITTED_LATEST; the TIMESTAMP ones are Trident's)"));
}

absl::Status SetProcessingGuarantee(KafkaSpoutConfig& c, absl::string_view name, const Value& v) {
  absl::StatusOr<std::string> s = EnumName(v);
  if (!s.ok()) return Bad(name, s.status().message());
  if (*s == "AT_LEAST_ONCE") c.guarantee = ProcessingGuarantee::kAtLeastOnce;
  else if (*s == "AT_MOST_ONCE") c.guarantee = ProcessingGuarantee::kAtMostOnce;
  else if (*s == "NO_GUARANTEE") c.guarantee = ProcessingGuarantee::kNoGuarantee;
  else return Bad(name, "AT_LEAST_ONCE, AT_MOST_ONCE or NO_GUARANTEE");
  return absl::OkStatus();
}

// `v` as an integer of at least `min` into `out`; the error names the setting.
template <typename Out>
absl::Status SetIntAtLeast(absl::string_view name, const Value& v, int64_t min, Out& out) {
  absl::StatusOr<int64_t> n = IntAtLeast(v, min);
  if (!n.ok()) return Bad(name, n.status().message());
  out = *n;
  return absl::OkStatus();
}

absl::Status SetPartitionRefreshPeriodMs(KafkaSpoutConfig& c, absl::string_view name,
                                         const Value& v) {
  absl::StatusOr<int64_t> ms = IntAtLeast(v, 1);
  if (!ms.ok()) return Bad(name, ms.status().message());
  c.partition_refresh_secs = std::max<int64_t>(1, (*ms + 999) / 1000);
  return absl::OkStatus();
}

absl::Status SetFlag(absl::string_view name, const Value& v, bool& out) {
  absl::StatusOr<bool> b = v.CoerceBool();
  if (!b.ok()) return Bad(name, b.status().message());
  out = *b;
  return absl::OkStatus();
}

// Accepted and not used: polling and metrics run on Tempest's own schedule.
absl::Status IgnoreNonNegative(KafkaSpoutConfig&, absl::string_view name, const Value& v) {
  int64_t unused = 0;
  return SetIntAtLeast(name, v, 0, unused);
}

// The builder's one-argument settings, by property name.
struct BuilderSetter {
  std::string_view name;
  absl::Status (*set)(KafkaSpoutConfig& c, absl::string_view name, const Value& v);
};

constexpr BuilderSetter kBuilderSetters[] = {
    {"groupId", &SetGroupId},
    {"firstPollOffsetStrategy", &SetFirstPollOffsetStrategy},
    {"processingGuarantee", &SetProcessingGuarantee},
    {"offsetCommitPeriodMs",
     [](KafkaSpoutConfig& c, absl::string_view name, const Value& v) {
       return SetIntAtLeast(name, v, 1, c.state_update_interval_ms);
     }},
    {"maxUncommittedOffsets",
     [](KafkaSpoutConfig& c, absl::string_view name, const Value& v) {
       return SetIntAtLeast(name, v, 1, c.max_uncommitted_offsets);
     }},
    {"partitionRefreshPeriodMs", &SetPartitionRefreshPeriodMs},
    {"retry",
     [](KafkaSpoutConfig& c, absl::string_view, const Value& v) { return ApplyRetry(c, v); }},
    {"recordTranslator",
     [](KafkaSpoutConfig& c, absl::string_view, const Value& v) { return ApplyTranslator(c, v); }},
    {"emitNullTuples",
     [](KafkaSpoutConfig& c, absl::string_view name, const Value& v) {
       return SetFlag(name, v, c.emit_null_tuples);
     }},
    {"tupleTrackingEnforced",
     [](KafkaSpoutConfig& c, absl::string_view name, const Value& v) {
       return SetFlag(name, v, c.tuple_tracking_enforced);
     }},
    {"pollTimeoutMs", &IgnoreNonNegative},
    {"metricsTimeBucketSizeInSecs", &IgnoreNonNegative},
};

// One builder setting, by its property name (Flux `properties`) or its
// setter (Flux `configMethods`, "set" + the property name).
absl::Status ApplySetting(KafkaSpoutConfig& c, std::string name, const ValueList& args) {
  if (absl::StartsWith(name, "set") && name.size() > 3) {
    name = name.substr(3);
    name[0] = static_cast<char>(std::tolower(static_cast<unsigned char>(name[0])));
  }
  if (name == "prop") return ApplyProps(c, args);
  if (args.size() != 1) return Bad(name, "takes one argument");
  for (const BuilderSetter& setter : kBuilderSetters) {
    if (name == setter.name) return setter.set(c, name, args[0]);
  }
  return Bad(name, "unknown setting (see spout/README.md, storm-kafka-client)");
}

// Builder(bootstrapServers, topics...) with topics as a list, a string, or
// several strings.
absl::Status ApplyBuilderArgs(KafkaSpoutConfig& c, const ValueList& ctor) {
  if (ctor.size() < 2) {
    return Bad("constructor", "takes (bootstrapServers, topics...)");
  }
  absl::StatusOr<std::string> bootstrap = ctor[0].CoerceString();
  if (!bootstrap.ok() || bootstrap->empty()) {
    return Bad("constructor", "the first argument must be the bootstrap servers (host:port,...)");
  }
  c.bootstrap_servers = *bootstrap;
  for (size_t i = 1; i < ctor.size(); ++i) {
    const Value& t = ctor[i];
    if (t.is_map()) {
      return Bad("constructor",
                 absl::StrCat("topics must be names; '", ClassOf(t),
                              "' (a Pattern or TopicFilter) is not supported, list the topics"));
    }
    const ValueList single{t};
    for (const Value& name : t.is_list() ? t.AsList() : single) {
      absl::StatusOr<std::string> s = name.CoerceString();
      if (!s.ok()) return Bad("constructor", "topics must be strings");
      std::string topic(absl::StripAsciiWhitespace(*s));
      if (!topic.empty()) c.topics.push_back(std::move(topic));
    }
  }
  return absl::OkStatus();
}

absl::Status ApplyBuilder(KafkaSpoutConfig& c, const Value& builder) {
  const ValueList* ctor = ListField(builder, "constructorArgs");
  const Value* props = builder.Find("properties");
  const Value* factory = props != nullptr ? props->Find("factory") : nullptr;
  if (factory != nullptr) {
    // KafkaSpoutConfig.builder(bootstrap, topics...) as a Flux factory.
    const Value* fargs = props->Find("factoryArgs");
    if (fargs == nullptr || !fargs->is_list()) return Bad("factory", "needs factoryArgs");
    RETURN_IF_ERROR(ApplyBuilderArgs(c, fargs->AsList()));
  } else {
    if (ctor == nullptr) return Bad("constructor", "takes (bootstrapServers, topics...)");
    RETURN_IF_ERROR(ApplyBuilderArgs(c, *ctor));
  }
  if (props != nullptr && props->is_map()) {
    for (const auto& [name, v] : props->AsMap()) {
      if (name == "factory" || name == "factoryArgs" || v.is_nil()) continue;
      RETURN_IF_ERROR(ApplySetting(c, name, ValueList{v}));
    }
  }
  if (const ValueList* methods = ListField(builder, "configMethods")) {
    for (const Value& m : *methods) {
      const Value* name = m.Find("name");
      const Value* margs = m.Find("args");
      if (name == nullptr || !name->is_string()) continue;
      const ValueList none;
      const ValueList& list = margs != nullptr && margs->is_list() ? margs->AsList() : none;
      if (name->AsString() == "build") continue;
      RETURN_IF_ERROR(ApplySetting(c, name->AsString(), list));
    }
  }
  return absl::OkStatus();
}

}  // namespace

namespace {

// The KafkaSpoutConfig$Builder bean: the spout's constructor arg, directly
// or inside a KafkaSpoutConfig.
absl::StatusOr<const Value*> BuilderBean(const api::ComponentArgs& args, const std::string& where) {
  if (args.constructor_args.size() != 1 || !args.constructor_args[0].is_map()) {
    return absl::InvalidArgumentError(
        absl::StrCat(where, " takes one constructor arg: a ref to a ", kConfigClass));
  }
  const Value* bean = &args.constructor_args[0];
  if (ClassOf(*bean) == kConfigClass) {
    const ValueList* ctor = ListField(*bean, "constructorArgs");
    if (ctor == nullptr || ctor->size() != 1 || ClassOf((*ctor)[0]) != kBuilderClass) {
      return absl::InvalidArgumentError(
          absl::StrCat(kConfigClass, " takes one constructor arg: a ref to a ", kBuilderClass));
    }
    bean = &(*ctor)[0];
  } else if (ClassOf(*bean) != kBuilderClass) {
    return absl::InvalidArgumentError(absl::StrCat(where, ": the constructor arg must be a ",
                                                   kConfigClass, ", not '", ClassOf(*bean), "'"));
  }
  return bean;
}

// Tempest's own additions, which may sit on the spout itself.
absl::Status ApplySpoutProperties(KafkaSpoutConfig& c, const api::ComponentArgs& args,
                                  const std::string& where) {
  for (const auto& [name, v] : args.properties) {
    if (v.is_nil()) continue;
    if (name == "deadLetterTopic") {
      absl::StatusOr<std::string> t = v.CoerceString();
      if (!t.ok()) return Bad("deadLetterTopic", t.status().message());
      c.dead_letter_topic = *t;
    } else if (name == "stopAtEnd") {
      RETURN_IF_ERROR(SetFlag("stopAtEnd", v, c.stop_at_end));
    } else if (name == "groupId") {
      RETURN_IF_ERROR(SetGroupId(c, "groupId", v));
    } else {
      return absl::InvalidArgumentError(
          absl::StrCat(where, ": unknown property '", name,
                       "' (the settings belong on the KafkaSpoutConfig$Builder)"));
    }
  }
  return absl::OkStatus();
}

absl::Status ValidateTopics(KafkaSpoutConfig& c, const std::string& where) {
  if (c.topics.empty()) return Bad("constructor", "no topics");
  std::sort(c.topics.begin(), c.topics.end());
  c.topics.erase(std::unique(c.topics.begin(), c.topics.end()), c.topics.end());
  for (const std::string& t : c.topics) {
    if (t.find('/') != std::string::npos || t == "." || t == "..") {
      return Bad("constructor", absl::StrCat("bad topic name '", t, "'"));
    }
  }
  if (!c.dead_letter_topic.empty() &&
      std::find(c.topics.begin(), c.topics.end(), c.dead_letter_topic) != c.topics.end()) {
    return absl::InvalidArgumentError(
        absl::StrCat(where, ": deadLetterTopic must not be one of the topics read"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<KafkaSpoutConfig> ParseKafkaClientSpoutArgs(const api::ComponentArgs& args) {
  const std::string where(kKafkaClientSpoutClass);
  ASSIGN_OR_RETURN(const Value* bean, BuilderBean(args, where));
  KafkaSpoutConfig c;
  c.id = args.id.value();
  // zk_root stays empty: the offsets live in the consumer group.
  c.retry = KafkaClientRetryDefaults();
  c.state_update_interval_ms = 30'000;  // offsetCommitPeriodMs
  c.start_offset_time = -2;             // UNCOMMITTED_EARLIEST
  c.scheme = RecordScheme::kRecord;     // DefaultRecordTranslator
  RETURN_IF_ERROR(ApplyBuilder(c, *bean));
  RETURN_IF_ERROR(ApplySpoutProperties(c, args, where));
  if (c.group_id.empty()) c.group_id = c.id;
  RETURN_IF_ERROR(ValidateTopics(c, where));
  return c;
}

std::vector<std::string> KafkaClientBeanClasses() {
  return {kConfigClass, kBuilderClass, kBackoffClass, kTimeIntervalClass, kDefaultTranslatorClass,
          std::string("org.apache.storm.flux.examples.") + kOnlyValueTranslatorName};
}

}  // namespace tempest::spout
