// NimbusOptions::FromConfig: the daemon's settings read from its config.

#include <chrono>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/api/string_view_compat.h"
#include "common/coord/cluster_zk_config.h"
#include "common/core/config/config_keys.h"
#include "common/core/status_macros.h"
#include "common/net/transport_secret.h"
#include "nimbus/nimbus.h"

namespace tempest::nimbus {
namespace {

absl::StatusOr<std::chrono::seconds> PositiveSecs(const api::Config& config, std::string_view key,
                                                  int64_t fallback, bool allow_zero) {
  const int64_t v = config.GetInt(key, fallback);
  if (v < 0 || (v == 0 && !allow_zero) || v > int64_t{86400} * 365) {
    return absl::InvalidArgumentError(
        absl::StrCat(api::Sv(key), " must be a positive number of seconds, not ", v));
  }
  return std::chrono::seconds(v);
}

// An integer key checked against its range (core::CheckConfigValue).
absl::StatusOr<int64_t> RangedInt(const api::Config& config, std::string_view key,
                                  int64_t fallback) {
  const api::Value* v = config.Find(key);
  if (v == nullptr) return fallback;
  RETURN_IF_ERROR(core::CheckConfigValue(key, *v));
  return v->CoerceInt();
}

// The REST limits of `o` from their tempest.api.* keys.
absl::Status ReadApiLimits(const api::Config& config, NimbusOptions& o) {
  ASSIGN_OR_RETURN(const int64_t body, RangedInt(config, "tempest.api.max.body.bytes",
                                                 static_cast<int64_t>(o.api_max_body_bytes)));
  ASSIGN_OR_RETURN(const int64_t head, RangedInt(config, "tempest.api.max.header.bytes",
                                                 static_cast<int64_t>(o.api_max_header_bytes)));
  ASSIGN_OR_RETURN(const int64_t secs, RangedInt(config, "tempest.api.request.timeout.secs", 30));
  o.api_max_body_bytes = static_cast<size_t>(body);
  o.api_max_header_bytes = static_cast<size_t>(head);
  o.api_request_timeout = std::chrono::seconds(secs);
  return absl::OkStatus();
}

// nimbus.task.timeout.secs, nimbus.task.launch.secs, nimbus.supervisor.timeout.secs.
absl::StatusOr<LivenessTimeouts> ReadLiveness(const api::Config& config) {
  ASSIGN_OR_RETURN(const std::chrono::seconds task_timeout,
                   PositiveSecs(config, api::kNimbusTaskTimeoutSecs, 30, false));
  ASSIGN_OR_RETURN(const std::chrono::seconds task_launch,
                   PositiveSecs(config, api::kNimbusTaskLaunchSecs, 120, true));
  ASSIGN_OR_RETURN(const std::chrono::seconds supervisor_timeout,
                   PositiveSecs(config, api::kNimbusSupervisorTimeoutSecs, 60, false));
  return LivenessTimeouts{task_timeout, task_launch, supervisor_timeout};
}

}  // namespace

absl::StatusOr<NimbusOptions> NimbusOptions::FromConfig(const api::Config& config) {
  NimbusOptions o;
  o.config = config;
  ASSIGN_OR_RETURN(coord::ClusterZkConfig zk, coord::ClusterZkConfig::FromConfig(config));
  o.zk_connect = zk.connect;
  o.root = zk.root;
  o.zk = zk.client;
  // A nimbus given its host's name serves (and registers itself) there
  // rather than on loopback, where no other host could reach it.
  o.bind_host =
      config.GetString("ui.host", config.GetString(api::kStormLocalHostname, "127.0.0.1"));
  if (o.bind_host.empty()) o.bind_host = "127.0.0.1";
  if (o.bind_host == "0.0.0.0" || o.bind_host == "::") {
    o.advertise_host = config.GetString(api::kStormLocalHostname, "");
  }
  const int64_t port = config.GetInt("ui.port", 8080);
  if (port < 0 || port > 65535) {
    return absl::InvalidArgumentError(absl::StrCat("ui.port must be 0..65535, not ", port));
  }
  o.port = static_cast<int>(port);
  const int64_t monitor = config.GetInt(api::kNimbusMonitorFreqSecs, 10);
  if (monitor > 0) o.monitor_interval = std::chrono::seconds(monitor);
  ASSIGN_OR_RETURN(o.liveness, ReadLiveness(config));
  ASSIGN_OR_RETURN(o.api_auth, net::HttpAuthPolicyFromConfig(config));
  RETURN_IF_ERROR(ReadApiLimits(config, o));
  if (const std::string file = config.GetString(net::kClusterSecretFileKey, ""); !file.empty()) {
    ASSIGN_OR_RETURN(o.cluster_secret, net::LoadClusterSecret(file));
  }
  return o;
}

}  // namespace tempest::nimbus
