#include "supervisor/supervisor_options.h"

#include <algorithm>
#include <string_view>

#include "absl/strings/str_cat.h"
#include "common/api/string_view_compat.h"
#include "common/coord/cluster_zk_config.h"
#include "common/core/status_macros.h"

namespace tempest::supervisor {
namespace {

using api::Sv;
using std::chrono::milliseconds;

// supervisor.slots.ports: a list of ports (a single integer is accepted too).
absl::StatusOr<std::vector<int>> PortList(const api::Value& v) {
  std::vector<api::Value> items;
  if (const api::ValueList* list = v.TryList()) {
    items.assign(list->begin(), list->end());
  } else {
    items.push_back(v);
  }
  std::vector<int> out;
  for (const api::Value& item : items) {
    absl::StatusOr<int64_t> port = item.CoerceInt();
    if (!port.ok() || *port < 1 || *port > 65535) {
      return absl::InvalidArgumentError(
          "supervisor.slots.ports must be a list of ports in 1..65535");
    }
    out.push_back(static_cast<int>(*port));
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

absl::StatusOr<milliseconds> Seconds(const api::Config& config, std::string_view key,
                                     int64_t default_secs, bool allow_zero = false) {
  const int64_t secs = config.GetInt(key, default_secs);
  if (secs < 0 || (secs == 0 && !allow_zero) || secs > 86400 * 365) {
    return absl::InvalidArgumentError(
        absl::StrCat(Sv(key), " must be a positive number of seconds, not ", secs));
  }
  return milliseconds(secs * 1000);
}

// The supervisor's periods and timeouts, in whole seconds in the config.
absl::Status ReadIntervals(const api::Config& config, SupervisorOptions& o) {
  struct Key {
    std::string_view key;
    int64_t default_secs;
    milliseconds* out;
    bool allow_zero;
  };
  for (const Key& k : {
           Key{api::kSupervisorHeartbeatFrequencySecs, 5, &o.heartbeat_interval, false},
           Key{api::kSupervisorMonitorFrequencySecs, 3, &o.monitor_interval, false},
           Key{api::kSupervisorWorkerTimeoutSecs, 30, &o.worker_timeout, false},
           Key{api::kSupervisorWorkerStartTimeoutSecs, 120, &o.worker_start_timeout, false},
           Key{api::kSupervisorWorkerShutdownSleepSecs, 3, &o.worker_shutdown_wait, true},
           Key{api::kTempestSupervisorWorkerExitGraceSecs, 10, &o.worker_exit_grace, true},
       }) {
    ASSIGN_OR_RETURN(*k.out, Seconds(config, k.key, k.default_secs, k.allow_zero));
  }
  return absl::OkStatus();
}

// The /metrics endpoint: port, host and, when reads are protected, its token.
absl::Status ReadMetricsEndpoint(const api::Config& config, SupervisorOptions& o) {
  const int64_t metrics_port = config.GetInt(kSupervisorMetricsPort, 0);
  if (metrics_port < 0 || metrics_port > 65535) {
    return absl::InvalidArgumentError(absl::StrCat(
        Sv(kSupervisorMetricsPort), " must be a port in 1..65535 (0: none), not ", metrics_port));
  }
  o.metrics_port = static_cast<int>(metrics_port);
  // On its host's address when it has one, so a scraper on another host reaches it.
  o.metrics_host =
      config.GetString(kSupervisorMetricsHost, o.hostname.empty() ? "127.0.0.1" : o.hostname);
  if (o.metrics_port != 0 && o.metrics_host.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(Sv(kSupervisorMetricsHost), " is empty"));
  }
  // Reads are protected as on nimbus: only with tempest.api.auth.reads and a
  // token file (the token file is read only when it matters here).
  if (o.metrics_port != 0 && config.GetBool(net::kApiAuthReadsKey, false)) {
    const std::string file = config.GetString(net::kApiTokenFileKey, "");
    if (!file.empty()) {
      ASSIGN_OR_RETURN(net::LoadedToken token, net::LoadTokenFile(file, net::kApiTokenFileKey));
      o.metrics_auth.token = std::move(token.token);
      o.metrics_auth.protect_reads = true;
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<SupervisorOptions> SupervisorOptions::FromConfig(const api::Config& config) {
  SupervisorOptions o;
  ASSIGN_OR_RETURN(coord::ClusterZkConfig zk, coord::ClusterZkConfig::FromConfig(config));
  o.zk_connect = zk.connect;
  o.root = zk.root;
  o.zk = zk.client;

  o.local_dir = config.GetString(api::kStormLocalDir, "tempest-local");
  if (o.local_dir.empty()) return absl::InvalidArgumentError("storm.local.dir is empty");
  o.hostname = config.GetString(api::kStormLocalHostname, "");
  o.worker_user = config.GetString(kSupervisorWorkerUser, std::string(kDefaultWorkerUser));
  ASSIGN_OR_RETURN(o.slot_uid_base, SlotUidBaseFrom(config));
  if (const api::Value* v = config.Find(api::kSupervisorSlotsPorts); v != nullptr && !v->is_nil()) {
    ASSIGN_OR_RETURN(o.slot_ports, PortList(*v));
  }
  RETURN_IF_ERROR(ReadIntervals(config, o));
  RETURN_IF_ERROR(ReadMetricsEndpoint(config, o));
  return o;
}

absl::StatusOr<std::optional<int64_t>> SlotUidBaseFrom(const api::Config& config) {
  if (const api::Value* v = config.Find(kSupervisorWorkerSlotUids); v != nullptr && !v->is_nil()) {
    const std::optional<bool> on = v->TryBool();
    if (!on) {
      return absl::InvalidArgumentError(
          absl::StrCat(Sv(kSupervisorWorkerSlotUids), " must be true or false"));
    }
    if (!*on) return std::optional<int64_t>();
  }
  int64_t base = kDefaultSlotUidBase;
  if (const api::Value* v = config.Find(kSupervisorWorkerSlotUidBase);
      v != nullptr && !v->is_nil()) {
    const std::optional<int64_t> n = v->is_int() ? v->TryInt() : std::nullopt;
    if (!n) {
      return absl::InvalidArgumentError(
          absl::StrCat(Sv(kSupervisorWorkerSlotUidBase), " must be an integer"));
    }
    base = *n;
  }
  // base + any port (1..65535) must be an ordinary, non-system uid below 2^31.
  if (base < 65536 || base > int64_t{0x7fffffff} - 65536) {
    return absl::InvalidArgumentError(absl::StrCat(Sv(kSupervisorWorkerSlotUidBase),
                                                   " must be in 65536..2147418111, not ", base));
  }
  return std::optional<int64_t>(base);
}

os::UnixUser SlotAccount(const os::UnixUser& account, std::optional<int64_t> slot_uid_base,
                         int port) {
  if (!slot_uid_base) return account;
  return os::UnixUser{absl::StrCat(account.name, "+", port),
                      static_cast<uid_t>(*slot_uid_base + port), account.gid};
}

}  // namespace tempest::supervisor
