#ifndef TEMPEST_COMMON_KAFKA_CONF_H_
#define TEMPEST_COMMON_KAFKA_CONF_H_

#include <map>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "common/kafka/handles.h"

namespace tempest::kafka {

// librdkafka properties, key -> value, set in key order.
using Settings = std::map<std::string, std::string>;

// The message of a rejected property: $0 is the key, $1 librdkafka's reason.
inline constexpr std::string_view kDefaultConfError = "Kafka property '$0': $1";

// A client configuration with every setting applied. A setting librdkafka
// rejects (unknown key, malformed value) is InvalidArgument with
// `error_format` filled in with the key and librdkafka's reason, so the
// caller's message names the property.
absl::StatusOr<ConfHandle> BuildConf(const Settings& settings,
                                     std::string_view error_format = kDefaultConfError);

// Applies `settings` to an existing configuration, as BuildConf does.
absl::Status ApplySettings(rd_kafka_conf_t& conf, const Settings& settings,
                           std::string_view error_format = kDefaultConfError);

enum class ClientType { kProducer, kConsumer };

// A client made from `conf`, which it consumes. On failure the status
// (InvalidArgument) carries librdkafka's reason alone, for the caller to
// prefix.
absl::StatusOr<ClientHandle> NewClient(ClientType type, ConfHandle conf);

// librdkafka's text for an error code (rd_kafka_err2str).
std::string_view ErrorText(int error_code);

}  // namespace tempest::kafka

#endif  // TEMPEST_COMMON_KAFKA_CONF_H_
