#include "spout/kafka/kafka_spout_config.h"

#include <algorithm>
#include <cctype>
#include <iterator>
#include <optional>
#include <string_view>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "common/api/component_registry.h"
#include "common/api/string_view_compat.h"
#include "common/core/status_macros.h"
#include "spout/kafka/kafka_client_spout_config.h"
#include "spout/kafka/offsets/offset_journal.h"

namespace tempest::spout {
namespace {

using api::Value;
using api::ValueList;
using api::ValueMap;

constexpr char kSpoutConfigClass[] = "org.apache.storm.kafka.SpoutConfig";
constexpr char kZkHostsClass[] = "org.apache.storm.kafka.ZkHosts";
constexpr char kSchemeAsMultiClass[] = "org.apache.storm.spout.SchemeAsMultiScheme";
constexpr char kStringSchemeClass[] = "org.apache.storm.kafka.StringScheme";
constexpr char kRawMultiSchemeClass[] = "org.apache.storm.spout.RawMultiScheme";
constexpr char kRawSchemeClass[] = "org.apache.storm.spout.RawScheme";
constexpr char kBackoffRetryClass[] = "org.apache.storm.kafka.ExponentialBackoffMsgRetryManager";

absl::Status Bad(absl::string_view where, absl::string_view name, absl::string_view why) {
  return absl::InvalidArgumentError(absl::StrCat(where, " property '", name, "': ", why));
}

// A list of strings given as a YAML list or a comma-separated string.
absl::StatusOr<std::vector<std::string>> StringList(const Value& v) {
  std::vector<std::string> out;
  if (const ValueList* list = v.TryList()) {
    for (const Value& item : *list) {
      ASSIGN_OR_RETURN(const std::string s, item.CoerceString());
      std::string t(absl::StripAsciiWhitespace(s));
      if (!t.empty()) out.push_back(std::move(t));
    }
  } else {
    ASSIGN_OR_RETURN(const std::string s, v.CoerceString());
    for (absl::string_view part : absl::StrSplit(s, ',')) {
      std::string t(absl::StripAsciiWhitespace(part));
      if (!t.empty()) out.push_back(std::move(t));
    }
  }
  return out;
}

absl::StatusOr<int64_t> IntAtLeast(const Value& v, int64_t min) {
  ASSIGN_OR_RETURN(const int64_t i, v.CoerceInt());
  if (i < min) return absl::InvalidArgumentError(absl::StrCat("must be >= ", min, ", got ", i));
  return i;
}

std::string Upper(std::string s) {
  for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

absl::StatusOr<RecordScheme> SchemeOf(const Value& v);

// The scheme bean inside SchemeAsMultiScheme (or a name string).
absl::StatusOr<RecordScheme> InnerScheme(const Value& v) {
  if (const std::string* s = v.TryString()) {
    if (*s == kStringSchemeClass) return RecordScheme::kString;
    if (*s == kRawSchemeClass) return RecordScheme::kRaw;
    return absl::InvalidArgumentError(absl::StrCat("unsupported scheme '", *s, "'"));
  }
  return SchemeOf(v);
}

absl::StatusOr<RecordScheme> SchemeOf(const Value& v) {
  if (const std::string* s = v.TryString()) {
    std::string name = absl::AsciiStrToLower(*s);
    if (name == "record") return RecordScheme::kRecord;
    if (name == "raw" || *s == kRawMultiSchemeClass || *s == kRawSchemeClass) {
      return RecordScheme::kRaw;
    }
    if (name == "string" || *s == kStringSchemeClass) return RecordScheme::kString;
    return absl::InvalidArgumentError(
        absl::StrCat("unknown scheme '", *s, "' (record, raw, string)"));
  }
  const Value* cls = v.Find("className");
  if (cls == nullptr || !cls->is_string()) {
    return absl::InvalidArgumentError("scheme must be a name or a component reference");
  }
  const std::string& name = cls->AsString();
  if (name == kStringSchemeClass) return RecordScheme::kString;
  if (name == kRawMultiSchemeClass || name == kRawSchemeClass) return RecordScheme::kRaw;
  if (name == kSchemeAsMultiClass) {
    const Value* ctor = v.Find("constructorArgs");
    if (ctor == nullptr || !ctor->is_list() || ctor->AsList().size() != 1) {
      return absl::InvalidArgumentError("SchemeAsMultiScheme takes one constructor arg");
    }
    return InnerScheme(ctor->AsList()[0]);
  }
  return absl::InvalidArgumentError(
      absl::StrCat("unsupported scheme class '", name,
                   "' (supported: SchemeAsMultiScheme(StringScheme), RawMultiScheme)"));
}

// Property names each form accepts (besides `kafka.`-prefixed client
// settings), for the "did you mean" of an unknown property.
constexpr std::string_view kCommonPropertyNames[] = {"zkServers",
                                                     "zkPort",
                                                     "processingGuarantee",
                                                     "startOffsetTime",
                                                     "ignoreZkOffsets",
                                                     "maxOffsetBehind",
                                                     "stateUpdateIntervalMs",
                                                     "retryInitialDelayMs",
                                                     "retryDelayMultiplier",
                                                     "retryDelayMaxMs",
                                                     "retryLimit",
                                                     "outOfRangePolicy",
                                                     "useStartOffsetTimeIfOffsetOutOfRange",
                                                     "deadLetterTopic",
                                                     "maxUncommittedOffsets",
                                                     "refreshFreqSecs",
                                                     "partitionRefreshSecs",
                                                     "stopAtEnd",
                                                     "outputStreamId",
                                                     "scheme",
                                                     "bootstrap.servers"};
constexpr std::string_view kTempestOnlyPropertyNames[] = {"topics", "topic", "zkRoot", "id"};
constexpr std::string_view kLegacyOnlyPropertyNames[] = {"fetchSizeBytes",
                                                         "fetchMaxWait",
                                                         "minFetchByte",
                                                         "socketTimeoutMs",
                                                         "bufferSizeBytes",
                                                         "metricsTimeBucketSizeInSecs",
                                                         "failedMsgRetryManagerClass",
                                                         "clientId"};

// " (did you mean 'x'?)" for a misspelt property of the form, or "".
std::string Suggestion(const std::string& name, bool legacy) {
  std::vector<std::string_view> known(std::begin(kCommonPropertyNames),
                                      std::end(kCommonPropertyNames));
  if (legacy) {
    known.insert(known.end(), std::begin(kLegacyOnlyPropertyNames),
                 std::end(kLegacyOnlyPropertyNames));
  } else {
    known.insert(known.end(), std::begin(kTempestOnlyPropertyNames),
                 std::end(kTempestOnlyPropertyNames));
  }
  std::optional<std::string> closest = api::ClosestName(name, known);
  return closest ? absl::StrCat(" (did you mean '", *closest, "'?)") : std::string();
}

enum class Applied { kYes, kUnknown };

// Property setters: each parses `v` into its field of `c`; an error's message
// is what is wrong with the value.
absl::Status SetStringList(const Value& v, std::vector<std::string>& out) {
  ASSIGN_OR_RETURN(out, StringList(v));
  return absl::OkStatus();
}

template <typename Out>
absl::Status SetIntAtLeast(const Value& v, int64_t min, Out& out) {
  ASSIGN_OR_RETURN(out, IntAtLeast(v, min));
  return absl::OkStatus();
}

absl::Status SetBool(const Value& v, bool& out) {
  ASSIGN_OR_RETURN(out, v.CoerceBool());
  return absl::OkStatus();
}

absl::Status SetString(const Value& v, std::string& out) {
  ASSIGN_OR_RETURN(out, v.CoerceString());
  return absl::OkStatus();
}

// `v` (case-folded by `fold`) as one of `choices`, else the error `expected`.
template <typename Enum, size_t N>
absl::Status SetChoice(const Value& v, std::string (*fold)(std::string),
                       const std::pair<std::string_view, Enum> (&choices)[N],
                       absl::string_view expected, Enum& out) {
  ASSIGN_OR_RETURN(const std::string s, v.CoerceString());
  const std::string folded = fold(s);
  for (const auto& [name, value] : choices) {
    if (folded == name) {
      out = value;
      return absl::OkStatus();
    }
  }
  return absl::InvalidArgumentError(absl::StrCat("'", s, "' is not ", expected));
}

std::string Lower(std::string s) { return absl::AsciiStrToLower(s); }

constexpr std::pair<std::string_view, ProcessingGuarantee> kGuarantees[] = {
    {"AT_LEAST_ONCE", ProcessingGuarantee::kAtLeastOnce},
    {"AT_MOST_ONCE", ProcessingGuarantee::kAtMostOnce},
    {"NO_GUARANTEE", ProcessingGuarantee::kNoGuarantee},
};
constexpr std::pair<std::string_view, OutOfRangePolicy> kOutOfRangePolicies[] = {
    {"earliest", OutOfRangePolicy::kEarliest},
    {"latest", OutOfRangePolicy::kLatest},
    {"fail", OutOfRangePolicy::kFail},
};

absl::Status SetZkPort(KafkaSpoutConfig& c, const Value& v) {
  absl::StatusOr<int64_t> p = IntAtLeast(v, 1);
  if (!p.ok() || *p > 65535) return absl::InvalidArgumentError("must be a port number");
  c.zk_port = *p;
  return absl::OkStatus();
}

absl::Status SetRetryDelayMultiplier(KafkaSpoutConfig& c, const Value& v) {
  ASSIGN_OR_RETURN(const double d, v.CoerceDouble());
  if (!(d > 0)) return absl::InvalidArgumentError("must be > 0");
  c.retry.retry_delay_multiplier = d;
  return absl::OkStatus();
}

absl::Status SetRetryLimit(KafkaSpoutConfig& c, const Value& v) {
  ASSIGN_OR_RETURN(const int64_t m, v.CoerceInt());
  c.retry.retry_limit = static_cast<int>(std::clamp<int64_t>(m, -1, 1000000000));
  return absl::OkStatus();
}

absl::Status SetUseStartOffsetTimeIfOutOfRange(KafkaSpoutConfig& c, const Value& v) {
  // storm-kafka without it errors on every fetch: our explicit "fail".
  bool use = true;
  RETURN_IF_ERROR(SetBool(v, use));
  if (!use) c.out_of_range = OutOfRangePolicy::kFail;
  return absl::OkStatus();
}

absl::Status SetScheme(KafkaSpoutConfig& c, const Value& v) {
  ASSIGN_OR_RETURN(c.scheme, SchemeOf(v));
  return absl::OkStatus();
}

struct PropertySetter {
  std::string_view name;
  absl::Status (*set)(KafkaSpoutConfig& c, const Value& v);
};

// Properties common to both forms.
constexpr PropertySetter kCommonSetters[] = {
    {"zkServers",
     [](KafkaSpoutConfig& c, const Value& v) { return SetStringList(v, c.zk_servers); }},
    {"zkPort", &SetZkPort},
    {"processingGuarantee",
     [](KafkaSpoutConfig& c, const Value& v) {
       return SetChoice(v, &Upper, kGuarantees, "AT_LEAST_ONCE, AT_MOST_ONCE or NO_GUARANTEE",
                        c.guarantee);
     }},
    {"startOffsetTime",
     [](KafkaSpoutConfig& c, const Value& v) { return SetIntAtLeast(v, -2, c.start_offset_time); }},
    {"ignoreZkOffsets",
     [](KafkaSpoutConfig& c, const Value& v) { return SetBool(v, c.ignore_zk_offsets); }},
    {"maxOffsetBehind",
     [](KafkaSpoutConfig& c, const Value& v) { return SetIntAtLeast(v, 1, c.max_offset_behind); }},
    {"stateUpdateIntervalMs",
     [](KafkaSpoutConfig& c, const Value& v) {
       return SetIntAtLeast(v, 1, c.state_update_interval_ms);
     }},
    {"retryInitialDelayMs",
     [](KafkaSpoutConfig& c, const Value& v) {
       return SetIntAtLeast(v, 0, c.retry.retry_initial_delay_ms);
     }},
    {"retryDelayMultiplier", &SetRetryDelayMultiplier},
    {"retryDelayMaxMs",
     [](KafkaSpoutConfig& c, const Value& v) {
       return SetIntAtLeast(v, 0, c.retry.retry_delay_max_ms);
     }},
    {"retryLimit", &SetRetryLimit},
    {"outOfRangePolicy",
     [](KafkaSpoutConfig& c, const Value& v) {
       return SetChoice(v, &Lower, kOutOfRangePolicies, "earliest, latest or fail", c.out_of_range);
     }},
    {"useStartOffsetTimeIfOffsetOutOfRange", &SetUseStartOffsetTimeIfOutOfRange},
    {"deadLetterTopic",
     [](KafkaSpoutConfig& c, const Value& v) { return SetString(v, c.dead_letter_topic); }},
    {"maxUncommittedOffsets",
     [](KafkaSpoutConfig& c, const Value& v) {
       return SetIntAtLeast(v, 1, c.max_uncommitted_offsets);
     }},
    {"refreshFreqSecs",
     [](KafkaSpoutConfig& c, const Value& v) {
       return SetIntAtLeast(v, 1, c.partition_refresh_secs);
     }},
    {"partitionRefreshSecs",
     [](KafkaSpoutConfig& c, const Value& v) {
       return SetIntAtLeast(v, 1, c.partition_refresh_secs);
     }},
    {"stopAtEnd", [](KafkaSpoutConfig& c, const Value& v) { return SetBool(v, c.stop_at_end); }},
    {"outputStreamId",
     [](KafkaSpoutConfig& c, const Value& v) { return SetString(v, c.output_stream); }},
    {"scheme", &SetScheme},
    {"bootstrap.servers",
     [](KafkaSpoutConfig& c, const Value& v) { return SetString(v, c.bootstrap_servers); }},
};

// Properties common to both forms. `where` names the component for errors.
absl::StatusOr<Applied> ApplyCommon(KafkaSpoutConfig& c, absl::string_view where,
                                    const std::string& name, const Value& v) {
  absl::Status status;
  if (const auto* setter =
          std::find_if(std::begin(kCommonSetters), std::end(kCommonSetters),
                       [&name](const PropertySetter& s) { return s.name == name; });
      setter != std::end(kCommonSetters)) {
    status = setter->set(c, v);
  } else if (absl::StartsWith(name, "kafka.")) {
    std::string value;
    status = SetString(v, value);
    if (status.ok()) c.kafka_properties[name.substr(6)] = std::move(value);
  } else {
    return Applied::kUnknown;
  }
  if (!status.ok()) return Bad(where, name, status.message());
  return Applied::kYes;
}

// SpoutConfig fields that map onto librdkafka settings or are accepted and
// ignored because librdkafka or Tempest handles them differently.
absl::StatusOr<Applied> ApplyLegacyOnly(KafkaSpoutConfig& c, absl::string_view where,
                                        const std::string& name, const Value& v) {
  static const std::map<std::string, std::string, std::less<>> kMapped = {
      {"fetchSizeBytes", "fetch.message.max.bytes"},
      {"fetchMaxWait", "fetch.wait.max.ms"},
      {"minFetchByte", "fetch.min.bytes"},
      {"socketTimeoutMs", "socket.timeout.ms"},
      {"bufferSizeBytes", "socket.receive.buffer.bytes"},
  };
  if (auto it = kMapped.find(name); it != kMapped.end()) {
    absl::StatusOr<int64_t> i = v.CoerceInt();
    if (!i.ok()) return Bad(where, name, i.status().message());
    // fetch.wait.max.ms 0 would make librdkafka spin; storm-kafka's 0 meant
    // "answer at once", which 1 ms approximates.
    int64_t value = (name == "fetchMaxWait") ? std::max<int64_t>(*i, 1) : *i;
    if (!c.kafka_properties.contains(it->second)) {
      c.kafka_properties[it->second] = absl::StrCat(value);
    }
    return Applied::kYes;
  }
  if (name == "metricsTimeBucketSizeInSecs") return Applied::kYes;  // metrics are pulled
  if (name == "failedMsgRetryManagerClass") {
    absl::StatusOr<std::string> s = v.CoerceString();
    if (!s.ok() || *s != kBackoffRetryClass) {
      return Bad(where, name, "only ExponentialBackoffMsgRetryManager is supported");
    }
    return Applied::kYes;
  }
  if (name == "clientId") {
    absl::StatusOr<std::string> s = v.CoerceString();
    if (!s.ok()) return Bad(where, name, s.status().message());
    if (!s->empty()) c.kafka_properties.emplace("client.id", *s);
    return Applied::kYes;
  }
  return Applied::kUnknown;
}

absl::Status Validate(KafkaSpoutConfig& c, absl::string_view where) {
  if (c.topics.empty()) return absl::InvalidArgumentError(absl::StrCat(where, ": no topics"));
  for (const std::string& t : c.topics) {
    if (t.find('/') != std::string::npos || t == "." || t == ".." || t.find('@') != t.npos) {
      return absl::InvalidArgumentError(absl::StrCat(where, ": bad topic name '", t, "'"));
    }
  }
  std::sort(c.topics.begin(), c.topics.end());
  c.topics.erase(std::unique(c.topics.begin(), c.topics.end()), c.topics.end());
  if (c.zk_root.empty() || c.zk_root[0] != '/') {
    return absl::InvalidArgumentError(
        absl::StrCat(where, ": zkRoot must be an absolute ZooKeeper path, got '", c.zk_root, "'"));
  }
  while (c.zk_root.size() > 1 && c.zk_root.back() == '/') c.zk_root.pop_back();
  if (c.id.empty() || c.id.find('/') != std::string::npos) {
    return absl::InvalidArgumentError(
        absl::StrCat(where, ": id must be a non-empty name without '/', got '", c.id, "'"));
  }
  if (c.bootstrap_servers.empty() && !c.broker_zk.has_value()) {
    return absl::InvalidArgumentError(absl::StrCat(where, ": bootstrap.servers is required"));
  }
  if (c.start_offset_time < -2) {
    return absl::InvalidArgumentError(absl::StrCat(where,
                                                   ": startOffsetTime must be -2, -1 or a "
                                                   "timestamp in ms"));
  }
  if (c.retry.retry_delay_max_ms < c.retry.retry_initial_delay_ms) {
    return absl::InvalidArgumentError(
        absl::StrCat(where, ": retryDelayMaxMs (", c.retry.retry_delay_max_ms,
                     ") must be >= retryInitialDelayMs (", c.retry.retry_initial_delay_ms, ")"));
  }
  if (!c.dead_letter_topic.empty() &&
      std::find(c.topics.begin(), c.topics.end(), c.dead_letter_topic) != c.topics.end()) {
    return absl::InvalidArgumentError(
        absl::StrCat(where, ": deadLetterTopic must not be one of the topics read"));
  }
  return absl::OkStatus();
}

absl::StatusOr<KafkaSpoutConfig> ParseTempest(const api::ComponentArgs& args) {
  const std::string where(kTempestKafkaSpoutClass);
  KafkaSpoutConfig c;
  c.zk_root = "/kafkaspout";
  c.id = args.id.value();
  if (!args.constructor_args.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(where, " takes properties, not constructor arguments"));
  }
  for (const auto& [name, v] : args.properties) {
    if (v.is_nil()) continue;
    if (name == "topics" || name == "topic") {
      absl::StatusOr<std::vector<std::string>> l = StringList(v);
      if (!l.ok()) return Bad(where, name, l.status().message());
      c.topics.insert(c.topics.end(), l->begin(), l->end());
      continue;
    }
    if (name == "zkRoot" || name == "id") {
      absl::StatusOr<std::string> s = v.CoerceString();
      if (!s.ok()) return Bad(where, name, s.status().message());
      (name == "zkRoot" ? c.zk_root : c.id) = *s;
      continue;
    }
    ASSIGN_OR_RETURN(const Applied applied, ApplyCommon(c, where, name, v));
    if (applied == Applied::kUnknown) {
      return absl::InvalidArgumentError(absl::StrCat(where, ": unknown property '", name, "'",
                                                     Suggestion(name, /*legacy=*/false)));
    }
  }
  if (c.bootstrap_servers.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(where, ": bootstrap.servers is required"));
  }
  RETURN_IF_ERROR(Validate(c, where));
  return c;
}

const ValueList* CtorArgs(const Value& bean) {
  const Value* v = bean.Find("constructorArgs");
  return v == nullptr ? nullptr : v->TryList();
}

absl::Status ApplyZkHosts(KafkaSpoutConfig& c, const Value& hosts) {
  const Value* cls = hosts.Find("className");
  if (cls == nullptr || !cls->is_string()) {
    return absl::InvalidArgumentError(
        "SpoutConfig: the hosts argument must be a ZkHosts component");
  }
  if (cls->AsString() != kZkHostsClass) {
    return absl::InvalidArgumentError(absl::StrCat("SpoutConfig: unsupported hosts class '",
                                                   cls->AsString(), "' (only ZkHosts)"));
  }
  const ValueList* ctor = CtorArgs(hosts);
  if (ctor == nullptr || ctor->empty() || ctor->size() > 2) {
    return absl::InvalidArgumentError("ZkHosts takes (brokerZkStr[, brokerZkPath])");
  }
  BrokerZkHosts zk;
  absl::StatusOr<std::string> s = (*ctor)[0].CoerceString();
  if (!s.ok() || s->empty()) return absl::InvalidArgumentError("ZkHosts: bad brokerZkStr");
  zk.connect = *s;
  if (ctor->size() == 2) {
    absl::StatusOr<std::string> p = (*ctor)[1].CoerceString();
    if (!p.ok() || p->empty() || (*p)[0] != '/') {
      return absl::InvalidArgumentError("ZkHosts: brokerZkPath must be an absolute path");
    }
    zk.path = *p;
  }
  if (const Value* props = hosts.Find("properties"); props != nullptr && props->is_map()) {
    for (const auto& [name, v] : props->AsMap()) {
      if (name == "refreshFreqSecs") {
        absl::StatusOr<int64_t> r = IntAtLeast(v, 1);
        if (!r.ok()) return Bad("ZkHosts", name, r.status().message());
        c.partition_refresh_secs = *r;
      } else if (name == "bootstrap.servers") {
        absl::StatusOr<std::string> b = v.CoerceString();
        if (!b.ok()) return Bad("ZkHosts", name, b.status().message());
        c.bootstrap_servers = *b;
      } else {
        return absl::InvalidArgumentError(absl::StrCat("ZkHosts: unknown property '", name, "'"));
      }
    }
  }
  c.broker_zk = zk;
  return absl::OkStatus();
}

// The properties of a SpoutConfig (or of the storm-kafka spout itself), `at`
// naming where they sit for errors.
absl::Status ApplyLegacyProperties(KafkaSpoutConfig& c, const ValueMap& props,
                                   absl::string_view at) {
  for (const auto& [name, v] : props) {
    if (v.is_nil()) continue;
    ASSIGN_OR_RETURN(Applied applied, ApplyCommon(c, at, name, v));
    if (applied == Applied::kYes) continue;
    ASSIGN_OR_RETURN(applied, ApplyLegacyOnly(c, at, name, v));
    if (applied == Applied::kUnknown) {
      return absl::InvalidArgumentError(
          absl::StrCat(at, ": unknown property '", name, "'", Suggestion(name, /*legacy=*/true)));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<KafkaSpoutConfig> ParseLegacy(const api::ComponentArgs& args) {
  const std::string where = "SpoutConfig";
  if (args.constructor_args.size() != 1 || !args.constructor_args[0].is_map()) {
    return absl::InvalidArgumentError(absl::StrCat(
        kStormKafkaSpoutClass, " takes one constructor arg: a ref to a SpoutConfig component"));
  }
  const Value& bean = args.constructor_args[0];
  const Value* cls = bean.Find("className");
  if (cls == nullptr || !cls->is_string() || cls->AsString() != kSpoutConfigClass) {
    return absl::InvalidArgumentError(
        absl::StrCat(kStormKafkaSpoutClass, ": the constructor arg must be a ", kSpoutConfigClass));
  }
  const ValueList* ctor = CtorArgs(bean);
  if (ctor == nullptr || (ctor->size() != 4 && ctor->size() != 5)) {
    return absl::InvalidArgumentError(
        "SpoutConfig takes (hosts, topic, zkRoot, id) or (hosts, topic, clientId, zkRoot, id)");
  }
  KafkaSpoutConfig c;
  c.storm_kafka_form = true;
  c.scheme = RecordScheme::kRaw;  // storm-kafka's default RawMultiScheme
  // Unchanged Storm pipelines keep Storm's behaviour; Open warns about it.
  c.retry = StormKafkaRetryDefaults();
  RETURN_IF_ERROR(ApplyZkHosts(c, (*ctor)[0]));
  std::vector<std::string> strings;
  for (size_t i = 1; i < ctor->size(); ++i) {
    absl::StatusOr<std::string> s = (*ctor)[i].CoerceString();
    if (!s.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("SpoutConfig constructor arg ", i, ": ", s.status().message()));
    }
    strings.push_back(*s);
  }
  c.topics = {strings[0]};
  if (strings.size() == 4) {
    if (!strings[1].empty()) c.kafka_properties["client.id"] = strings[1];
    strings.erase(strings.begin() + 1);
  }
  c.zk_root = strings[1];
  c.id = strings[2];
  if (const Value* props = bean.Find("properties"); props != nullptr && props->is_map()) {
    RETURN_IF_ERROR(ApplyLegacyProperties(c, props->AsMap(), where));
  }
  // Tempest extensions may also sit on the spout itself.
  RETURN_IF_ERROR(ApplyLegacyProperties(c, args.properties, kStormKafkaSpoutClass));
  RETURN_IF_ERROR(Validate(c, where));
  return c;
}

}  // namespace

absl::StatusOr<KafkaSpoutConfig> ParseKafkaSpoutArgs(const api::ComponentArgs& args) {
  if (args.class_name == kStormKafkaSpoutClass) return ParseLegacy(args);
  if (args.class_name == kKafkaClientSpoutClass) return ParseKafkaClientSpoutArgs(args);
  return ParseTempest(args);
}

std::optional<std::string> ImmediateRetryWarning(const KafkaSpoutConfig& c) {
  if (!c.storm_kafka_form || c.retry.retry_initial_delay_ms > 0) return std::nullopt;
  const std::string how_long =
      c.retry.retry_limit > 0 ? absl::StrCat("up to retryLimit ", c.retry.retry_limit, " times")
                              : absl::StrCat("forever (retryLimit ", c.retry.retry_limit, ")");
  return absl::StrCat(
      "retryInitialDelayMs is 0 (storm-kafka's default): a failed tuple is emitted again at "
      "once, ",
      how_long,
      ", so a bolt that always fails it keeps this spout busy at full speed. Set "
      "retryInitialDelayMs (e.g. 100), retryDelayMultiplier (2.0), retryDelayMaxMs (10000) and "
      "retryLimit with a deadLetterTopic on the SpoutConfig, or use tempest.KafkaSpout, whose "
      "defaults back off");
}

namespace {

// Whether the topology left storm.zookeeper.servers/port at Storm's defaults
// ("localhost", 2181), i.e. named no ZooKeeper of its own.
bool ZookeeperLeftAtDefaults(const api::Config& config) {
  const Value* servers = config.Find(api::kStormZookeeperServers);
  const bool default_servers = servers == nullptr ||
                               (servers->is_list() && servers->AsList().size() == 1 &&
                                servers->AsList()[0].TryString() != nullptr &&
                                *servers->AsList()[0].TryString() == "localhost");
  return default_servers && config.GetInt(api::kStormZookeeperPort, 2181) == 2181;
}

}  // namespace

absl::StatusOr<std::string> ResolveKafkaSpoutConfig(KafkaSpoutConfig& c,
                                                    const api::Config& topology_config) {
  if (c.offsets_in_kafka()) {
    // storm-kafka-client: no ZooKeeper; its own defaults were set at parse.
    if (!c.max_uncommitted_offsets.has_value()) c.max_uncommitted_offsets = 10'000'000;
    if (!c.partition_refresh_secs.has_value()) c.partition_refresh_secs = 2;
    c.journal_max_entries = 0;
    return std::string();
  }
  // In a cluster, a spout and topology that name no ZooKeeper keep offsets in
  // the cluster's own, as Storm does (not at localhost:2181).
  const std::string cluster_zk =
      topology_config.GetString(api::kTempestClusterZookeeperConnect, "");
  if (c.zk_servers.empty() && !cluster_zk.empty() && ZookeeperLeftAtDefaults(topology_config)) {
    c.zk_servers = absl::StrSplit(cluster_zk, ',', absl::SkipEmpty());
  }
  if (c.zk_servers.empty()) {
    if (const Value* servers = topology_config.Find(api::kStormZookeeperServers)) {
      absl::StatusOr<std::vector<std::string>> l = StringList(*servers);
      if (!l.ok()) {
        return absl::InvalidArgumentError(
            absl::StrCat(api::Sv(api::kStormZookeeperServers), ": ", l.status().message()));
      }
      c.zk_servers = *l;
    }
  }
  if (c.zk_servers.empty()) {
    return absl::InvalidArgumentError(
        "KafkaSpout: no ZooKeeper for offsets (set zkServers or storm.zookeeper.servers)");
  }
  if (!c.zk_port.has_value()) c.zk_port = topology_config.GetInt(api::kStormZookeeperPort, 2181);
  if (!c.max_uncommitted_offsets.has_value()) {
    int64_t m = topology_config.GetInt(kMaxUncommittedOffsetsKey, kDefaultMaxUncommittedOffsets);
    c.max_uncommitted_offsets = m > 0 ? m : kDefaultMaxUncommittedOffsets;
  }
  if (!c.partition_refresh_secs.has_value()) {
    int64_t r = topology_config.GetInt(kPartitionRefreshSecsKey, 60);
    c.partition_refresh_secs = r > 0 ? r : 60;
  }
  c.journal_max_entries = std::max<int64_t>(
      0, topology_config.GetInt(kJournalMaxEntriesKey, kDefaultJournalMaxEntries));
  c.journal_retention_secs = std::max<int64_t>(
      0, topology_config.GetInt(kJournalRetentionSecsKey, kDefaultJournalRetentionSecs));
  std::vector<std::string> hosts;
  for (const std::string& s : c.zk_servers) {
    // A server given with its own port keeps it (Tempest extension).
    hosts.push_back(s.find(':') == std::string::npos ? absl::StrCat(s, ":", *c.zk_port) : s);
  }
  return absl::StrJoin(hosts, ",");
}

std::vector<std::string> KafkaSpoutBeanClasses() {
  std::vector<std::string> classes = {kSpoutConfigClass,    kZkHostsClass,
                                      kSchemeAsMultiClass,  kStringSchemeClass,
                                      kRawMultiSchemeClass, kRawSchemeClass,
                                      kBackoffRetryClass};
  for (std::string& c : KafkaClientBeanClasses()) classes.push_back(std::move(c));
  return classes;
}

}  // namespace tempest::spout
