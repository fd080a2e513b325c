#ifndef TEMPEST_SUPERVISOR_SUPERVISOR_OPTIONS_H_
#define TEMPEST_SUPERVISOR_SUPERVISOR_OPTIONS_H_

#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "common/api/config.h"
#include "common/coord/retry_policy.h"
#include "common/core/clock.h"
#include "common/core/metrics_registry.h"
#include "common/net/http_auth.h"
#include "common/os/privileges.h"

namespace tempest::supervisor {

// The account workers run as when their supervisor runs as root (submitted
// code never runs as root). Read by the supervisor and by each worker.
inline constexpr std::string_view kSupervisorWorkerUser = "supervisor.worker.user";
inline constexpr std::string_view kDefaultWorkerUser = "nobody";
// Under a root supervisor, each slot's worker runs as a uid of its own, the
// base plus the slot's port, in the primary group of supervisor.worker.user
// (docs/adr/0021-worker-sandbox.md): one topology cannot read, write or
// signal another's files and processes. false: every worker runs as
// supervisor.worker.user itself.
inline constexpr std::string_view kSupervisorWorkerSlotUids = "tempest.supervisor.worker.slot.uids";
inline constexpr std::string_view kSupervisorWorkerSlotUidBase =
    "tempest.supervisor.worker.slot.uid.base";
// Clear of login accounts, of systemd's dynamic users (61184-65519), of the
// usual subordinate-id ranges (100000 up) and of 2^31, where some tools
// start to misread uids.
inline constexpr int64_t kDefaultSlotUidBase = 1900000000;
// The supervisor's Prometheus endpoint (docs/adr/0019): the port (0 or
// absent: none) and the address it is bound to.
inline constexpr std::string_view kSupervisorMetricsPort = "tempest.supervisor.metrics.port";
inline constexpr std::string_view kSupervisorMetricsHost = "tempest.supervisor.metrics.host";

// What a Supervisor runs with (read from the Storm config by FromConfig).
// A plain value; copied into each part of the supervisor.
struct SupervisorOptions {
  std::string zk_connect;         // "host:port,host:port"
  std::string root = "/tempest";  // storm.zookeeper.root
  coord::ZkClientConfig zk;       // storm.zookeeper.* timeouts and retries
  // storm.local.dir: the supervisor id and the worker directories.
  std::string local_dir = "tempest-local";
  // storm.local.hostname, else gethostname().
  std::string hostname;
  std::vector<int> slot_ports = {6700, 6701, 6702, 6703};  // supervisor.slots.ports
  // supervisor.heartbeat.frequency.secs: how often SupervisorInfo is rewritten.
  std::chrono::milliseconds heartbeat_interval{5000};
  // supervisor.monitor.frequency.secs: the assignment poll behind the watches.
  std::chrono::milliseconds monitor_interval{3000};
  // How often worker processes are checked for exit and their heartbeats
  // read: a crashed worker is relaunched within about this long.
  std::chrono::milliseconds check_interval{100};
  std::chrono::milliseconds worker_timeout{30000};         // supervisor.worker.timeout.secs
  std::chrono::milliseconds worker_start_timeout{120000};  // supervisor.worker.start.timeout.secs
  std::chrono::milliseconds worker_shutdown_wait{3000};    // supervisor.worker.shutdown.sleep.secs
  // tempest.supervisor.worker.exit.grace.secs: how long a worker whose slot
  // was unassigned or reassigned may take to exit by itself.
  std::chrono::milliseconds worker_exit_grace{10000};
  // Cap of the crash-loop back-off.
  std::chrono::milliseconds max_relaunch_delay{30000};
  // Bound of each ZooKeeper call and of API calls waiting for the control thread.
  std::chrono::milliseconds op_timeout{10000};
  // The program a worker runs, as an argv prefix; "worker" and its options
  // follow (the worker contract in supervisor/README.md). Tests replace it.
  std::vector<std::string> worker_command = {"/proc/self/exe"};
  // Appended verbatim to every worker's command line: the supervisor's own
  // global config arguments (`--config FILE`, `-c key=value`), so workers
  // read the same ZooKeeper settings.
  std::vector<std::string> worker_config_args;
  // supervisor.worker.user: who workers run as when the supervisor is root.
  std::string worker_user = "nobody";
  // Set by Supervisor::Create when it runs as root: the account worker
  // directories are given to. Each worker switches to it itself, after
  // reading its config and before it runs any component.
  std::optional<os::UnixUser> worker_account;
  // tempest.supervisor.worker.slot.uids / .slot.uid.base: the base of the
  // slot uids; nullopt when workers run as worker_account itself.
  std::optional<int64_t> slot_uid_base = kDefaultSlotUidBase;
  std::string version = "tempest-0.1.0";
  core::Clock* clock = &core::RealClock();
  // tempest.supervisor.metrics.port: GET /metrics of the supervisor and its
  // workers; 0 = not served. tempest.supervisor.metrics.host: the address
  // it listens on (an IP address, like nimbus's ui.host; unset:
  // storm.local.hostname, else 127.0.0.1).
  int metrics_port = 0;
  std::string metrics_host = "127.0.0.1";
  // Who may scrape: as nimbus's GET endpoints, the API token
  // (tempest.api.token.file) is needed only with tempest.api.auth.reads.
  net::HttpAuthPolicy metrics_auth;
  // Where the ZooKeeper session's metrics go; Supervisor sets its own
  // registry (null: MetricsRegistry::Global()).
  core::MetricsRegistry* metrics = nullptr;

  // storm.zookeeper.servers/port/root/session.timeout/retry.*, storm.local.dir,
  // storm.local.hostname, supervisor.slots.ports,
  // supervisor.heartbeat.frequency.secs, supervisor.monitor.frequency.secs,
  // supervisor.worker.timeout.secs, supervisor.worker.start.timeout.secs,
  // supervisor.worker.shutdown.sleep.secs,
  // tempest.supervisor.worker.exit.grace.secs, supervisor.worker.user,
  // tempest.supervisor.metrics.port/host (with a port: tempest.api.auth.reads
  // and tempest.api.token.file). InvalidArgument for unusable values.
  static absl::StatusOr<SupervisorOptions> FromConfig(const api::Config& config);
};

// tempest.supervisor.worker.slot.uids and .slot.uid.base as the supervisor
// and each of its workers read them: the uid base, or nullopt when slot uids
// are off. InvalidArgument for a value that is not a boolean, or a base that
// would put a slot uid outside 65536..2^31-1.
absl::StatusOr<std::optional<int64_t>> SlotUidBaseFrom(const api::Config& config);

// Who the worker of slot `port` runs as under a root supervisor: `account`
// itself, or with a slot uid base, uid base+port in account's primary group
// (named "<account>+<port>" in logs).
os::UnixUser SlotAccount(const os::UnixUser& account, std::optional<int64_t> slot_uid_base,
                         int port);

}  // namespace tempest::supervisor

#endif  // TEMPEST_SUPERVISOR_SUPERVISOR_OPTIONS_H_
