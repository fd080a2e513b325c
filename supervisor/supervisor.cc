#include "supervisor/supervisor.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <future>
#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/api/string_view_compat.h"
#include "common/core/status_macros.h"
#include "common/net/http_auth.h"
#include "spdlog/spdlog.h"
#include "supervisor/metrics_view.h"
#include "supervisor/worker_files.h"

namespace tempest::supervisor {
namespace {

// A slot uid that some account already has would let that account and the
// slot's topologies reach each other's files and processes.
absl::Status CheckSlotUids(const SupervisorOptions& options) {
  if (!options.slot_uid_base) return absl::OkStatus();
  for (int port : options.slot_ports) {
    const os::UnixUser slot = SlotAccount(*options.worker_account, options.slot_uid_base, port);
    if (!os::UidIsMapped(slot.uid)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "the uid ", slot.uid, " of slot ", port, " does not exist in this user namespace; set ",
          api::Sv(kSupervisorWorkerSlotUidBase), " inside the namespace's uid range, or ",
          api::Sv(kSupervisorWorkerSlotUids), ": false"));
    }
    if (std::optional<std::string> owner = os::AccountNameOf(slot.uid)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "the uid ", slot.uid, " of slot ", port, " belongs to the account '", *owner,
          "'; choose another ", api::Sv(kSupervisorWorkerSlotUidBase),
          " (slot uids must be no account's)"));
    }
  }
  return absl::OkStatus();
}

}  // namespace

using std::chrono::milliseconds;

absl::StatusOr<std::unique_ptr<Supervisor>> Supervisor::Create(SupervisorOptions options) {
  if (options.slot_ports.empty()) {
    return absl::InvalidArgumentError("supervisor.slots.ports is empty: no slot to offer");
  }
  if (options.worker_command.empty()) {
    return absl::InvalidArgumentError("the worker command is empty");
  }
  if (options.hostname.empty()) {
    char name[256] = {};
    if (::gethostname(name, sizeof(name) - 1) != 0 || name[0] == '\0') {
      return absl::InternalError("gethostname failed; set storm.local.hostname");
    }
    options.hostname = name;
  }
  // Submitted code (multilang commands, plugins) runs in workers: under a
  // root supervisor they run as an unprivileged account, never as root.
  if (os::RunningAsRoot()) {
    absl::StatusOr<os::UnixUser> account = os::LookUpUnprivilegedUser(options.worker_user);
    if (!account.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("supervisor.worker.user: ", account.status().message(),
                       " (a supervisor running as root starts its workers as this account)"));
    }
    options.worker_account = *account;
    RETURN_IF_ERROR(CheckSlotUids(options));
    if (options.slot_uid_base) {
      spdlog::info("supervisor runs as root: each slot's worker runs as uid {}+port in the group "
                   "of {} (gid {})",
                   *options.slot_uid_base, account->name, account->gid);
    } else {
      spdlog::info("supervisor runs as root: workers run as {} (uid {})", account->name,
                   account->uid);
    }
  } else if (options.worker_user != kDefaultWorkerUser) {
    spdlog::warn(
        "supervisor.worker.user '{}' is ignored: the supervisor is not root, so "
        "workers run as its own user",
        options.worker_user);
  }
  // Worker directories are handed to workers, which may run elsewhere than
  // our working directory: make the local dir absolute.
  std::error_code ec;
  std::filesystem::path local = std::filesystem::absolute(options.local_dir, ec);
  if (ec) {
    return absl::InvalidArgumentError(
        absl::StrCat("storm.local.dir '", options.local_dir, "': ", ec.message()));
  }
  options.local_dir = local.lexically_normal().string();
  if (options.local_dir.size() > 1 && options.local_dir.back() == '/') options.local_dir.pop_back();
  std::unique_ptr<Supervisor> s(new Supervisor(std::move(options)));
  RETURN_IF_ERROR(s->Start());
  return s;
}

absl::Status Supervisor::Start() {
  const int64_t started_at_ms = options_.clock->WallMillis();
  started_at_ms_ = started_at_ms;
  options_.metrics = &metrics_;
  RETURN_IF_ERROR(MakeDirs(options_.local_dir + "/workers"));
  ASSIGN_OR_RETURN(id_, LoadOrCreateSupervisorId(options_.local_dir));

  // Each side posts to the other's thread: a worker exit asks for a fresh
  // assignment read, and every read's result goes to the control thread.
  workers_ = std::make_unique<WorkerControl>(
      options_, id_, [this] { cluster_->RequestSync(); }, metrics_,
      [this](const std::string& topology_id, int port, std::optional<std::string> record) {
        cluster_->executor().Post([this, topology_id, port, record = std::move(record)] {
          cluster_->WriteExitRecord(topology_id, port, record);
        });
      });
  cluster_ = std::make_unique<ClusterSync>(
      options_, id_, started_at_ms,
      [this](std::optional<DesiredSlots> desired) {
        workers_->executor().Post([this, desired = std::move(desired)]() mutable {
          workers_->SetDesired(std::move(desired));
        });
      },
      [this] { return workers_->UsedPorts(); });
  // A port that cannot be bound fails the start before anything else runs.
  RETURN_IF_ERROR(StartMetricsServer());
  RETURN_IF_ERROR(cluster_->Connect());
  // The assignments decide which leftover workers to adopt, so they must be
  // known first; registration then reports the adopted ports as used.
  absl::StatusOr<DesiredSlots> desired =
      RunOn<DesiredSlots>(cluster_->executor(), [this] { return cluster_->SyncAssignments(); });
  if (!desired.ok()) {
    return absl::UnavailableError(
        absl::StrCat("cannot read assignments: ", desired.status().message()));
  }
  RETURN_IF_ERROR(
      RunOn<bool>(workers_->executor(), [this, d = *desired]() -> absl::StatusOr<bool> {
        workers_->AdoptLeftovers(d);
        return true;
      }));
  absl::StatusOr<bool> registered =
      RunOn<bool>(cluster_->executor(), [this]() -> absl::StatusOr<bool> {
        RETURN_IF_ERROR(cluster_->Register());
        return true;
      });
  if (!registered.ok()) {
    return absl::UnavailableError(absl::StrCat("cannot register ", cluster_->NodePath(), ": ",
                                               registered.status().message()));
  }
  spdlog::info("supervisor {}: registered on {} with slots {}", id_, options_.hostname,
               absl::StrJoin(options_.slot_ports, ","));

  workers_->StartTicking();
  cluster_->StartLoops();
  return absl::OkStatus();
}

absl::Status Supervisor::StartMetricsServer() {
  if (options_.metrics_port == 0) return absl::OkStatus();
  ASSIGN_OR_RETURN(http_loop_, net::EventLoop::Create("sup-metrics"));
  net::HttpRouter router;
  net::HttpHandler metrics = [this](const net::HttpRequest&) {
    net::HttpResponse response;
    response.content_type = "text/plain; version=0.0.4; charset=utf-8";
    response.body = RenderMetrics();
    return response;
  };
  RETURN_IF_ERROR(
      router.Add("GET", "/metrics", net::RequireAuth(options_.metrics_auth, std::move(metrics))));
  net::HttpServerOptions ho;
  ho.bind_address = options_.metrics_host;
  ho.port = options_.metrics_port;
  ho.body_limit_bytes = 64 << 10;  // scrapes carry no body
  ho.max_connections = 32;
  ho.metrics = &metrics_;
  absl::StatusOr<std::unique_ptr<net::HttpServer>> http =
      net::HttpServer::Create(*http_loop_, std::move(ho), std::move(router));
  if (!http.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("cannot serve /metrics on ", options_.metrics_host, ":", options_.metrics_port,
                     " (tempest.supervisor.metrics.host/port): ", http.status().message()));
  }
  http_ = *std::move(http);
  spdlog::info("supervisor {}: metrics on http://{}:{}/metrics", id_, options_.metrics_host,
               http_->port());
  return absl::OkStatus();
}

std::string Supervisor::RenderMetrics() const {
  SupervisorMetricsView view;
  view.supervisor_id = id_;
  view.host = options_.hostname;
  view.version = options_.version;
  const int64_t now_ms = options_.clock->WallMillis();
  view.now_secs = now_ms / 1000;
  view.uptime_secs = std::max<int64_t>(0, (now_ms - started_at_ms_) / 1000);
  view.slots_offered = static_cast<int>(options_.slot_ports.size());
  view.slots_used = static_cast<int>(workers_->UsedPorts().size());
  view.own = metrics_.Snapshot();
  view.workers = workers_->WorkerMetrics();
  return RenderSupervisorMetrics(view);
}

Supervisor::~Supervisor() {
  // No scrape may run while the parts below go away.
  if (http_) http_->Stop();
  if (http_loop_) http_loop_->Stop();
  if (workers_ == nullptr) return;  // Start failed before anything ran
  workers_->BeginStop();
  // No more syncs or registrations; then the workers, on the thread that
  // owns them (bounded: the shutdown wait plus the SIGKILL reap).
  cluster_->Stop();
  auto done = std::make_shared<std::promise<void>>();
  std::future<void> finished = done->get_future();
  workers_->executor().Post([this, done] {
    if (!leave_workers_running_) workers_->StopAllWorkers();
    done->set_value();
  });
  // Bounded; either way StopThread below joins a stop still running (or
  // drops one that never started).
  (void)finished.wait_for(options_.worker_shutdown_wait + milliseconds(10000));
  workers_->StopThread();
  cluster_->Close(/*delete_node=*/!leave_workers_running_);
}

template <typename T>
absl::StatusOr<T> Supervisor::RunOn(coord::SerialExecutor& executor,
                                    std::function<absl::StatusOr<T>()> fn) {
  auto promise = std::make_shared<std::promise<absl::StatusOr<T>>>();
  std::future<absl::StatusOr<T>> result = promise->get_future();
  executor.Post([promise, fn = std::move(fn)] { promise->set_value(fn()); });
  // Start-up may stop leftover workers, which takes up to the shutdown wait.
  if (result.wait_for(options_.op_timeout + options_.worker_shutdown_wait) !=
      std::future_status::ready) {
    return absl::DeadlineExceededError("the supervisor did not complete the request in time");
  }
  return result.get();
}

absl::StatusOr<std::vector<WorkerSnapshot>> Supervisor::Workers() {
  return RunOn<std::vector<WorkerSnapshot>>(
      workers_->executor(),
      [this]() -> absl::StatusOr<std::vector<WorkerSnapshot>> { return workers_->Snapshot(); });
}

absl::Status Supervisor::SyncNow() {
  RETURN_IF_ERROR(RunOn<bool>(cluster_->executor(), [this]() -> absl::StatusOr<bool> {
    RETURN_IF_ERROR(cluster_->SyncAndPublish());
    return true;
  }));
  // The published result is queued before this, so the check sees it.
  return RunOn<bool>(workers_->executor(),
                     [this]() -> absl::StatusOr<bool> {
                       workers_->CheckAndPlan();
                       return true;
                     })
      .status();
}

}  // namespace tempest::supervisor
