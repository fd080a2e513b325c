// ZkSession's value types, life cycle and accessors. The dispatcher thread
// is in zk_session_dispatcher.cc, the calls in zk_session_calls.cc, the C
// client's callbacks in zk_c_adapter.cc.

#include "common/coord/zk_session.h"

#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "common/coord/zk_acl_check.h"
#include "common/coord/zk_c_adapter.h"
#include "common/coord/zk_paths.h"
#include "common/coord/zk_session_metrics.h"
#include "common/coord/zk_watch_registry.h"
#include "common/core/status_macros.h"
#include "common/os/limits.h"

namespace tempest::coord {

using std::chrono::milliseconds;

namespace {
// This Debian build of absl has its own string_view type.
absl::string_view Av(std::string_view s) { return absl::string_view(s.data(), s.size()); }
}  // namespace

std::string_view ZkSessionStateName(ZkSessionState state) {
  switch (state) {
    case ZkSessionState::kConnecting:
      return "connecting";
    case ZkSessionState::kConnected:
      return "connected";
    case ZkSessionState::kReadOnly:
      return "read_only";
    case ZkSessionState::kSuspended:
      return "suspended";
    case ZkSessionState::kLost:
      return "lost";
    case ZkSessionState::kAuthFailed:
      return "auth_failed";
    case ZkSessionState::kClosed:
      return "closed";
  }
  return "unknown";
}

bool IsEphemeral(ZkCreateMode mode) {
  return mode == ZkCreateMode::kEphemeral || mode == ZkCreateMode::kEphemeralSequential;
}
bool IsSequential(ZkCreateMode mode) {
  return mode == ZkCreateMode::kPersistentSequential || mode == ZkCreateMode::kEphemeralSequential;
}

ZkOp ZkOp::Create(std::string path, std::string data, ZkCreateMode mode,
                  std::optional<ZkAcl> acl, ZkNodeAccess access) {
  ZkOp op;
  op.kind = Kind::kCreate;
  op.path = std::move(path);
  op.data = std::move(data);
  op.mode = mode;
  op.acl = std::move(acl);
  op.access = access;
  return op;
}
ZkOp ZkOp::Delete(std::string path, int version) {
  ZkOp op;
  op.kind = Kind::kDelete;
  op.path = std::move(path);
  op.version = version;
  return op;
}
ZkOp ZkOp::Set(std::string path, std::string data, int version) {
  ZkOp op;
  op.kind = Kind::kSet;
  op.path = std::move(path);
  op.data = std::move(data);
  op.version = version;
  return op;
}
ZkOp ZkOp::Check(std::string path, int version) {
  ZkOp op;
  op.kind = Kind::kCheck;
  op.path = std::move(path);
  op.version = version;
  return op;
}

// ---------------------------------------------------------------------------
// Life cycle

ZkSession::ZkSession(Options options) : options_(std::move(options)) {}

absl::StatusOr<std::unique_ptr<ZkSession>> ZkSession::Create(Options options) {
  if (options.clock == nullptr) options.clock = &core::RealClock();
  std::string hosts, chroot;
  RETURN_IF_ERROR(SplitConnectString(options.connect_string, &hosts, &chroot));
  if (chroot.empty() && !options.chroot.empty() && options.chroot != "/") {
    RETURN_IF_ERROR(ValidatePath(options.chroot));
    chroot = options.chroot;
  }
  if (!chroot.empty() && options.create_chroot) {
    // The C client does not create its chroot; a short-lived session on the
    // bare ensemble does.
    Options bootstrap = options;
    bootstrap.connect_string = hosts;
    bootstrap.chroot.clear();
    bootstrap.create_chroot = false;
    ASSIGN_OR_RETURN(const std::unique_ptr<ZkSession> boot,
                     ZkSession::Create(std::move(bootstrap)));
    RETURN_IF_ERROR(boot->WaitConnected(options.config.connection_timeout));
    RETURN_IF_ERROR(boot->EnsurePath(chroot, ZkCall{options.config.connection_timeout}));
  }
  auto session = std::unique_ptr<ZkSession>(new ZkSession(std::move(options)));
  session->hosts_ = std::move(hosts);
  session->chroot_ = std::move(chroot);
  RETURN_IF_ERROR(session->Start());
  return session;
}

absl::Status ZkSession::Start() {
  op_timeout_ = options_.operation_timeout.count() > 0 ? options_.operation_timeout
                                                       : options_.config.connection_timeout;
  metrics_ = std::make_unique<ZkSessionMetrics>(options_.metrics.get());
  watches_ = std::make_unique<ZkWatchRegistry>();
  auto handle = NewHandle(1);
  if (handle == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat("zookeeper_init failed for '", hosts_, chroot_, "': ", std::strerror(errno)));
  }
  {
    absl::MutexLock lock(&state_mu_);
    generation_ = 1;
  }
  {
    absl::MutexLock lock(&handle_mu_);
    handle_ = std::move(handle);
  }
  return os::StartThread(dispatcher_, "a ZooKeeper session's dispatcher",
                         [this] { DispatchLoop(); });
}

std::unique_ptr<ZkSession::Handle> ZkSession::NewHandle(uint64_t generation) {
  auto h = std::make_unique<Handle>();
  h->session = this;
  h->generation = generation;
  h->zh = ZkCAdapter::Init(hosts_ + chroot_, options_.config.session_timeout, h.get(),
                           options_.allow_read_only);
  if (h->zh == nullptr) return nullptr;
  // Credentials are per handle; the C client re-sends them on reconnect.
  for (const auto& [scheme, credential] : options_.auth) {
    ZkCAdapter::AddAuth(h->zh, scheme, credential);
  }
  if (options_.config.auth.enabled()) {
    ZkCAdapter::AddAuth(h->zh, options_.config.auth.scheme, options_.config.auth.payload);
  }
  metrics_->SessionCreated();
  return h;
}

ZkSession::~ZkSession() { Close(); }

void ZkSession::Close() {
  {
    absl::MutexLock lock(&close_mu_);
    if (closed_) return;
    closed_ = true;
  }
  {
    // Closing joins the C client's threads; their last completions (ZCLOSING)
    // still only enqueue, so holding this lock cannot deadlock.
    absl::MutexLock lock(&handle_mu_);
    if (handle_ != nullptr && handle_->zh != nullptr) zookeeper_close(handle_->zh);
    handle_.reset();
  }
  Enqueue([this] {
    Transition(ZkSessionState::kClosed);
    watches_->DropAll();
  });
  {
    absl::MutexLock lock(&queue_mu_);
    stopping_ = true;
  }
  queue_cv_.SignalAll();
  if (dispatcher_.joinable()) dispatcher_.join();
}

// ---------------------------------------------------------------------------
// Accessors

ZkAclPolicy ZkSession::acl_policy() const {
  ZkAclPolicy p;
  p.authenticated = !options_.auth.empty() || options_.config.auth.enabled();
  p.legacy_world_readable = options_.config.auth.offsets_world_readable;
  p.trusted_digest_ids = options_.config.auth.trusted_digest_ids;
  return p;
}

std::vector<ZkAclEntry> ZkSession::Identities() const {
  std::vector<ZkAclEntry> ids;
  if (options_.config.auth.enabled() && options_.config.auth.scheme == "digest") {
    ids.push_back(ZkAclEntry{kZkPermAll, "digest", DigestId(options_.config.auth.payload)});
  }
  for (const auto& [scheme, credential] : options_.auth) {
    if (scheme == "digest") ids.push_back(ZkAclEntry{kZkPermAll, "digest", DigestId(credential)});
  }
  return ids;
}

ZkSessionState ZkSession::state() const {
  absl::MutexLock lock(&state_mu_);
  return state_;
}
int64_t ZkSession::session_id() const {
  absl::MutexLock lock(&state_mu_);
  return session_id_;
}
std::string ZkSession::session_password() const {
  absl::MutexLock lock(&state_mu_);
  return password_;
}
uint64_t ZkSession::generation() const {
  absl::MutexLock lock(&state_mu_);
  return generation_;
}
milliseconds ZkSession::negotiated_timeout() const {
  absl::MutexLock lock(&state_mu_);
  return negotiated_timeout_;
}

bool ZkSession::WaitOnce(absl::CondVar& cv, absl::Mutex& mu, DeadlineClock::time_point deadline) {
  const auto now = DeadlineClock::now();
  if (now >= deadline) return false;
  cv.WaitWithTimeout(&mu, absl::FromChrono(deadline - now));
  return true;
}

absl::Status ZkSession::WaitConnected(milliseconds timeout) const {
  const auto deadline = DeadlineClock::now() + timeout;
  absl::MutexLock lock(&state_mu_);
  while (state_ != ZkSessionState::kConnected && state_ != ZkSessionState::kClosed &&
         state_ != ZkSessionState::kAuthFailed) {
    if (!WaitOnce(state_cv_, state_mu_, deadline)) break;
  }
  if (state_ == ZkSessionState::kConnected) return absl::OkStatus();
  if (state_ == ZkSessionState::kAuthFailed) {
    return absl::PermissionDeniedError(
        "ZooKeeper rejected this client's credentials (storm.zookeeper.auth.scheme / "
        "storm.zookeeper.auth.payload)");
  }
  return absl::UnavailableError(
      absl::StrCat("ZooKeeper session not connected (state ", Av(ZkSessionStateName(state_)), ")"));
}

int ZkSession::Subscribe(Listener listener) {
  absl::MutexLock lock(&listeners_mu_);
  const int id = next_listener_++;
  listeners_[id] = std::move(listener);
  return id;
}

void ZkSession::Unsubscribe(int id) {
  // Ids start at 1; 0 is "never subscribed" (an owner that failed before
  // subscribing, closing what it has), and also what running_listener_ holds
  // when no listener runs, so it must not wait below.
  if (id == 0) return;
  absl::MutexLock lock(&listeners_mu_);
  listeners_.erase(id);
  // A listener unsubscribing itself returns at once (its own call is the one
  // running); any other caller waits until that call has ended.
  while (running_listener_ == id && listener_thread_ != std::this_thread::get_id()) {
    listener_done_cv_.Wait(&listeners_mu_);
  }
}

}  // namespace tempest::coord
