#include "common/coord/zk_session.h"

#include <zookeeper/zookeeper.h>

#include <algorithm>
#include <cstring>
#include <random>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "common/coord/zk_paths.h"
#include "common/coord/zk_status.h"

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

ZkAcl OpenAcl() { return {{kZkPermAll, "world", "anyone"}}; }
ZkAcl CreatorAllAcl() { return {{kZkPermAll, "auth", ""}}; }
ZkAcl CreatorAllWorldReadAcl() {
  return {{kZkPermAll, "auth", ""}, {kZkPermRead, "world", "anyone"}};
}

ZkOp ZkOp::Create(std::string path, std::string data, ZkCreateMode mode, ZkAcl acl) {
  ZkOp op;
  op.kind = Kind::kCreate;
  op.path = std::move(path);
  op.data = std::move(data);
  op.mode = mode;
  op.acl = std::move(acl);
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

namespace {

int CreateFlags(ZkCreateMode mode) {
  switch (mode) {
    case ZkCreateMode::kPersistent:
      return ZOO_PERSISTENT;
    case ZkCreateMode::kEphemeral:
      return ZOO_EPHEMERAL;
    case ZkCreateMode::kPersistentSequential:
      return ZOO_PERSISTENT_SEQUENTIAL;
    case ZkCreateMode::kEphemeralSequential:
      return ZOO_EPHEMERAL_SEQUENTIAL;
  }
  return ZOO_PERSISTENT;
}

ZkStat FromStat(const Stat& s) {
  ZkStat out;
  out.czxid = s.czxid;
  out.mzxid = s.mzxid;
  out.ctime = s.ctime;
  out.mtime = s.mtime;
  out.version = s.version;
  out.cversion = s.cversion;
  out.aversion = s.aversion;
  out.ephemeral_owner = s.ephemeralOwner;
  out.data_length = s.dataLength;
  out.num_children = s.numChildren;
  out.pzxid = s.pzxid;
  return out;
}

// The C structures for one ACL list; the strings point into `source`, which
// must outlive it. The C client serializes ACLs when the call is made.
struct CAcl {
  explicit CAcl(const ZkAcl& source) {
    entries.reserve(source.size());
    for (const auto& e : source) {
      ACL acl;
      acl.perms = e.perms;
      acl.id.scheme = const_cast<char*>(e.scheme.c_str());
      acl.id.id = const_cast<char*>(e.id.c_str());
      entries.push_back(acl);
    }
    vector.count = static_cast<int32_t>(entries.size());
    vector.data = entries.data();
  }
  std::vector<ACL> entries;
  ACL_vector vector{};
};

bool RetriableRead(int rc) {
  return rc == ZCONNECTIONLOSS || rc == ZOPERATIONTIMEOUT || rc == ZSESSIONEXPIRED ||
         rc == ZINVALIDSTATE || rc == ZSESSIONMOVED || rc == ZTHROTTLEDOP ||
         rc == ZNEWCONFIGNOQUORUM;
}

// Codes after which a write definitely did not happen and may be sent again
// (on a new session unless the call is bound to the old one).
bool DefinitelyNotApplied(int rc) {
  return rc == ZSESSIONEXPIRED || rc == ZINVALIDSTATE || rc == ZTHROTTLEDOP || rc == ZNOTREADONLY ||
         rc == ZNEWCONFIGNOQUORUM || rc == ZSESSIONMOVED;
}

std::string FailureLabel(const absl::Status& status) {
  if (auto rc = ZkCodeOf(status)) return ZkCodeName(*rc);
  return absl::StatusCodeToString(status.code());
}

}  // namespace

// ---------------------------------------------------------------------------
// Internals

struct ZkSession::Handle {
  ZkSession* session = nullptr;
  uint64_t generation = 0;
  zhandle_t* zh = nullptr;
};

// The shared state of one request: the caller waits on it; the C client's
// completion thread fills it. Shared so a caller that gave up at its deadline
// leaves it valid for the late completion.
struct ZkSession::Pending {
  std::mutex mu;
  std::condition_variable cv;
  bool done = false;
  int rc = ZOK;
  ZkStat stat;
  std::string data;
  std::vector<std::string> strings;
  std::string created;
  // Multi: buffers the C client writes into when the reply arrives.
  std::vector<zoo_op_t> ops;
  std::vector<zoo_op_result_t> results;
  std::vector<Stat> set_stats;
  std::vector<std::vector<char>> path_bufs;
  std::vector<ZkOp> op_storage;
  std::vector<std::unique_ptr<CAcl>> acls;

  void Finish(int code) {
    std::lock_guard<std::mutex> lock(mu);
    rc = code;
    done = true;
    cv.notify_all();
  }
};

struct ZkSession::Attempt {
  absl::Status pre;        // not sent (not connected in time, fenced, closed)
  bool timed_out = false;  // sent, no reply before the deadline
  int rc = ZOK;
  int64_t session = 0;  // the session it was sent on
};

// Entry points for the C client's threads: they only enqueue.
struct ZkSessionCallbacks {
  using Ctx = std::shared_ptr<ZkSession::Pending>;
  static std::unique_ptr<Ctx> Take(const void* data) {
    return std::unique_ptr<Ctx>(static_cast<Ctx*>(const_cast<void*>(data)));
  }

  static void SessionWatcher(zhandle_t*, int type, int state, const char*, void* ctx) {
    if (type != ZOO_SESSION_EVENT) return;
    auto* h = static_cast<ZkSession::Handle*>(ctx);
    ZkSession* s = h->session;
    const uint64_t gen = h->generation;
    s->Enqueue([s, gen, state] { s->OnSessionEvent(gen, state); });
  }
  static void PathWatcher(zhandle_t*, int type, int, const char* path, void* ctx) {
    // Session events also reach path watchers; the handle watcher covers them.
    if (type == ZOO_SESSION_EVENT) return;
    auto* h = static_cast<ZkSession::Handle*>(ctx);
    ZkSession* s = h->session;
    const uint64_t gen = h->generation;
    std::string p = path != nullptr ? path : "";
    s->Enqueue(
        [s, gen, type, p = std::move(p)]() mutable { s->OnWatchEvent(gen, type, std::move(p)); });
  }

  static void VoidDone(int rc, const void* data) { (*Take(data))->Finish(rc); }
  static void StatDone(int rc, const Stat* stat, const void* data) {
    auto ctx = Take(data);
    if (stat != nullptr) (*ctx)->stat = FromStat(*stat);
    (*ctx)->Finish(rc);
  }
  static void DataDone(int rc, const char* value, int len, const Stat* stat, const void* data) {
    auto ctx = Take(data);
    if (rc == ZOK) {
      if (value != nullptr && len > 0) (*ctx)->data.assign(value, static_cast<size_t>(len));
      if (stat != nullptr) (*ctx)->stat = FromStat(*stat);
    }
    (*ctx)->Finish(rc);
  }
  static void StringsDone(int rc, const String_vector* strings, const void* data) {
    auto ctx = Take(data);
    if (rc == ZOK && strings != nullptr) {
      for (int i = 0; i < strings->count; ++i) (*ctx)->strings.emplace_back(strings->data[i]);
    }
    (*ctx)->Finish(rc);
  }
  static void StringDone(int rc, const char* value, const void* data) {
    auto ctx = Take(data);
    if (rc == ZOK && value != nullptr) (*ctx)->created = value;
    (*ctx)->Finish(rc);
  }
  static void AuthDone(int, const void*) {}

  struct AsyncSet {
    ZkSession* session;
    ZkSession::SetCallback done;
    core::Clock::TimePoint start;
    std::string path;
    int rc = 0;
    ZkStat stat;
  };
  static void AsyncSetDone(int rc, const Stat* stat, const void* data);
};

struct ZkSession::Metrics {
  struct Op {
    core::Counter* count;
    core::Histogram* latency_us;
  };
  explicit Metrics(core::MetricsRegistry& r) : registry(r) {
    for (const char* name :
         {"create", "get", "set", "delete", "exists", "children", "multi", "set_async"}) {
      ops[name] = Op{&r.GetCounter("tempest_zk_ops_total", {{"op", name}}),
                     &r.GetHistogram("tempest_zk_op_latency_us", {{"op", name}})};
    }
    set_async = &ops.at("set_async");
    state = &r.GetGauge("tempest_zk_session_state");
    sessions = &r.GetCounter("tempest_zk_sessions_created_total");
  }
  void Record(const std::string& op, core::Clock::Duration elapsed, const absl::Status& status) {
    Record(ops.at(op), elapsed, op.c_str(), status);
  }
  void Record(Op& o, core::Clock::Duration elapsed, const char* op, const absl::Status& status) {
    o.count->Add();
    o.latency_us->Record(std::chrono::duration_cast<std::chrono::microseconds>(elapsed).count());
    if (!status.ok()) {
      registry
          .GetCounter("tempest_zk_op_failures_total", {{"op", op}, {"code", FailureLabel(status)}})
          .Add();
    }
  }
  void Ambiguous(const std::string& op, const std::string& outcome) {
    registry.GetCounter("tempest_zk_ambiguous_writes_total", {{"op", op}, {"outcome", outcome}})
        .Add();
  }
  void Transition(ZkSessionState from, ZkSessionState to) {
    registry
        .GetCounter("tempest_zk_session_transitions_total",
                    {{"from", std::string(ZkSessionStateName(from))},
                     {"to", std::string(ZkSessionStateName(to))}})
        .Add();
    state->Set(static_cast<int64_t>(to));
  }

  core::MetricsRegistry& registry;
  std::map<std::string, Op> ops;
  Op* set_async;
  core::Gauge* state;
  core::Counter* sessions;
};

void ZkSessionCallbacks::AsyncSetDone(int rc, const Stat* stat, const void* data) {
  auto* ctx = static_cast<AsyncSet*>(const_cast<void*>(data));
  ctx->rc = rc;
  if (rc == ZOK && stat != nullptr) ctx->stat = FromStat(*stat);
  // Capturing only the pointer keeps the task inside std::function's small
  // buffer: no allocation per completion on the hot path.
  ctx->session->Enqueue([ctx] {
    std::unique_ptr<AsyncSet> owned(ctx);
    ZkSession* s = owned->session;
    absl::Status status = ZkStatus(owned->rc, "set", owned->path);
    s->metrics_->Record(*s->metrics_->set_async, s->options_.clock->Now() - owned->start,
                        "set_async", status);
    if (status.ok()) {
      owned->done(owned->stat);
    } else {
      owned->done(std::move(status));
    }
  });
}

// ---------------------------------------------------------------------------
void SetZkClientLogStream(std::FILE* stream) { zoo_set_log_stream(stream); }

// Life cycle

ZkSession::ZkSession(Options options) : options_(std::move(options)) {}

absl::StatusOr<std::unique_ptr<ZkSession>> ZkSession::Create(Options options) {
  static std::once_flag log_level_once;
  std::call_once(log_level_once, [] {
    // The C client logs every reconnect at INFO to stderr; keep warnings.
    zoo_set_debug_level(std::getenv("TEMPEST_ZK_DEBUG") != nullptr ? ZOO_LOG_LEVEL_DEBUG
                                                                   : ZOO_LOG_LEVEL_WARN);
  });
  if (options.clock == nullptr) options.clock = &core::RealClock();
  std::string hosts, chroot;
  if (auto s = SplitConnectString(options.connect_string, &hosts, &chroot); !s.ok()) return s;
  if (chroot.empty() && !options.chroot.empty() && options.chroot != "/") {
    if (auto s = ValidatePath(options.chroot); !s.ok()) return s;
    chroot = options.chroot;
  }
  if (!chroot.empty() && options.create_chroot) {
    // The C client does not create its chroot; a short-lived session on the
    // bare ensemble does.
    Options bootstrap = options;
    bootstrap.connect_string = hosts;
    bootstrap.chroot.clear();
    bootstrap.create_chroot = false;
    auto boot = ZkSession::Create(std::move(bootstrap));
    if (!boot.ok()) return boot.status();
    if (auto s = (*boot)->WaitConnected(options.config.connection_timeout); !s.ok()) return s;
    if (auto s = (*boot)->EnsurePath(chroot, ZkCall{options.config.connection_timeout}); !s.ok()) {
      return s;
    }
  }
  auto session = std::unique_ptr<ZkSession>(new ZkSession(std::move(options)));
  session->hosts_ = std::move(hosts);
  session->chroot_ = std::move(chroot);
  if (auto s = session->Start(); !s.ok()) return s;
  return session;
}

absl::Status ZkSession::Start() {
  op_timeout_ = options_.operation_timeout.count() > 0 ? options_.operation_timeout
                                                       : options_.config.connection_timeout;
  metrics_ = std::make_unique<Metrics>(options_.metrics.get());
  auto handle = NewHandle(1);
  if (handle == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat("zookeeper_init failed for '", hosts_, chroot_, "': ", std::strerror(errno)));
  }
  {
    std::lock_guard<std::mutex> lock(state_mu_);
    generation_ = 1;
  }
  {
    std::unique_lock<std::shared_mutex> lock(handle_mu_);
    handle_ = std::move(handle);
  }
  dispatcher_ = std::thread([this] { DispatchLoop(); });
  return absl::OkStatus();
}

std::unique_ptr<ZkSession::Handle> ZkSession::NewHandle(uint64_t generation) {
  auto h = std::make_unique<Handle>();
  h->session = this;
  h->generation = generation;
  const std::string connect = hosts_ + chroot_;
  const int flags = options_.allow_read_only ? ZOO_READONLY : 0;
  h->zh = zookeeper_init(connect.c_str(), &ZkSessionCallbacks::SessionWatcher,
                         static_cast<int>(options_.config.session_timeout.count()), nullptr,
                         h.get(), flags);
  if (h->zh == nullptr) return nullptr;
  // Credentials are per handle; the C client re-sends them on reconnect.
  for (const auto& [scheme, credential] : options_.auth) {
    zoo_add_auth(h->zh, scheme.c_str(), credential.data(), static_cast<int>(credential.size()),
                 &ZkSessionCallbacks::AuthDone, nullptr);
  }
  metrics_->sessions->Add();
  return h;
}

ZkSession::~ZkSession() { Close(); }

void ZkSession::Close() {
  {
    std::lock_guard<std::mutex> lock(close_mu_);
    if (closed_) return;
    closed_ = true;
  }
  {
    // Closing joins the C client's threads; their last completions (ZCLOSING)
    // still only enqueue, so holding this lock cannot deadlock.
    std::unique_lock<std::shared_mutex> lock(handle_mu_);
    if (handle_ != nullptr && handle_->zh != nullptr) zookeeper_close(handle_->zh);
    handle_.reset();
  }
  Enqueue([this] {
    Transition(ZkSessionState::kClosed);
    DropWatches();
  });
  {
    std::lock_guard<std::mutex> lock(queue_mu_);
    stopping_ = true;
  }
  queue_cv_.notify_all();
  if (dispatcher_.joinable()) dispatcher_.join();
}

// ---------------------------------------------------------------------------
// Dispatcher thread

void ZkSession::Enqueue(std::function<void()> task) {
  bool wake;
  {
    std::lock_guard<std::mutex> lock(queue_mu_);
    queue_.push_back(std::move(task));
    // Only the first task of a batch needs to wake the dispatcher; the rest
    // are picked up with it.
    wake = queue_.size() == 1;
  }
  if (wake) queue_cv_.notify_one();
}

void ZkSession::DispatchLoop() {
  std::deque<std::function<void()>> batch;
  for (;;) {
    {
      std::unique_lock<std::mutex> lock(queue_mu_);
      // While suspended, wake often enough to run the local session timer.
      const bool suspended = state() == ZkSessionState::kSuspended;
      queue_cv_.wait_for(lock, suspended ? milliseconds(20) : milliseconds(250),
                         [this] { return !queue_.empty() || stopping_; });
      if (queue_.empty() && stopping_) return;
      batch.swap(queue_);
    }
    for (auto& task : batch) task();
    batch.clear();
    CheckLocalTimer();
  }
}

void ZkSession::CheckLocalTimer() {
  bool lost = false;
  {
    std::lock_guard<std::mutex> lock(state_mu_);
    if (state_ == ZkSessionState::kSuspended && negotiated_timeout_.count() > 0 &&
        options_.clock->Now() - suspended_at_ >= negotiated_timeout_) {
      lost = true;
    }
  }
  if (lost) Transition(ZkSessionState::kLost, /*by_local_timer=*/true);
}

void ZkSession::OnSessionEvent(uint64_t generation, int zk_state) {
  {
    std::lock_guard<std::mutex> lock(state_mu_);
    if (generation != generation_) return;  // an old handle's late event
  }
  const ZkSessionState current = state();
  if (current == ZkSessionState::kClosed) return;
  if (zk_state == ZOO_CONNECTED_STATE || zk_state == ZOO_READONLY_STATE) {
    int64_t id = 0;
    std::string password;
    int timeout = 0;
    {
      std::shared_lock<std::shared_mutex> lock(handle_mu_);
      if (handle_ != nullptr && handle_->zh != nullptr) {
        const clientid_t* cid = zoo_client_id(handle_->zh);
        if (cid != nullptr) {
          id = cid->client_id;
          password.assign(cid->passwd, sizeof(cid->passwd));
        }
        timeout = zoo_recv_timeout(handle_->zh);
      }
    }
    {
      std::lock_guard<std::mutex> lock(state_mu_);
      session_id_ = id;
      password_ = std::move(password);
      negotiated_timeout_ = milliseconds(timeout);
    }
    Transition(zk_state == ZOO_CONNECTED_STATE ? ZkSessionState::kConnected
                                               : ZkSessionState::kReadOnly);
  } else if (zk_state == ZOO_EXPIRED_SESSION_STATE) {
    Transition(ZkSessionState::kLost);
    ReplaceHandle();
  } else if (zk_state == ZOO_AUTH_FAILED_STATE) {
    Transition(ZkSessionState::kAuthFailed);
  } else {
    // CONNECTING / ASSOCIATING / NOTCONNECTED: a disconnect. Never a reason
    // for a new session: the old one may well be alive.
    if (current == ZkSessionState::kConnected || current == ZkSessionState::kReadOnly) {
      {
        std::lock_guard<std::mutex> lock(state_mu_);
        suspended_at_ = options_.clock->Now();
      }
      Transition(ZkSessionState::kSuspended);
    }
  }
}

void ZkSession::ReplaceHandle() {
  uint64_t next = 0;
  {
    std::lock_guard<std::mutex> lock(state_mu_);
    next = ++generation_;
    session_id_ = 0;
    password_.clear();
  }
  DropWatches();
  {
    std::unique_lock<std::shared_mutex> lock(handle_mu_);
    {
      std::lock_guard<std::mutex> closing(close_mu_);
      if (closed_) return;  // Close() owns the handle from here on
    }
    if (handle_ != nullptr && handle_->zh != nullptr) zookeeper_close(handle_->zh);
    handle_ = NewHandle(next);
    if (handle_ == nullptr) {
      // Only fails on bad arguments or resource exhaustion; retry shortly.
      Enqueue([this] {
        std::this_thread::sleep_for(milliseconds(100));
        ReplaceHandle();
      });
      return;
    }
  }
  Transition(ZkSessionState::kConnecting);
}

void ZkSession::Transition(ZkSessionState next, bool by_local_timer) {
  ZkSessionEvent event;
  {
    std::lock_guard<std::mutex> lock(state_mu_);
    if (state_ == next) return;
    if (state_ == ZkSessionState::kClosed) return;
    event.previous = state_;
    event.state = next;
    event.session_id = session_id_;
    event.generation = generation_;
    event.by_local_timer = by_local_timer;
    state_ = next;
  }
  state_cv_.notify_all();
  metrics_->Transition(event.previous, event.state);
  std::lock_guard<std::recursive_mutex> lock(listeners_mu_);
  std::vector<int> ids;
  for (const auto& [id, l] : listeners_) ids.push_back(id);
  for (int id : ids) {
    auto it = listeners_.find(id);
    if (it == listeners_.end()) continue;  // unsubscribed by an earlier listener
    Listener listener = it->second;        // a copy: it may unsubscribe itself
    listener(event);
  }
}

void ZkSession::OnWatchEvent(uint64_t generation, int type, std::string path) {
  {
    std::lock_guard<std::mutex> lock(state_mu_);
    if (generation != generation_) return;
  }
  ZkWatchEvent event;
  event.path = path;
  std::vector<WatchReg> fire;
  {
    std::lock_guard<std::mutex> lock(watch_mu_);
    auto take = [&](std::map<std::string, std::vector<WatchReg>>& m) {
      auto it = m.find(path);
      if (it == m.end()) return;
      for (auto& r : it->second) fire.push_back(std::move(r));
      m.erase(it);
    };
    if (type == ZOO_CREATED_EVENT) {
      event.type = ZkWatchEventType::kCreated;
      take(data_watches_);
    } else if (type == ZOO_CHANGED_EVENT) {
      event.type = ZkWatchEventType::kChanged;
      take(data_watches_);
    } else if (type == ZOO_DELETED_EVENT) {
      event.type = ZkWatchEventType::kDeleted;
      take(data_watches_);
      take(child_watches_);
    } else if (type == ZOO_CHILD_EVENT) {
      event.type = ZkWatchEventType::kChildren;
      take(child_watches_);
    } else {
      return;
    }
  }
  for (auto& r : fire) r.fn(event);
}

void ZkSession::DropWatches() {
  std::vector<std::pair<std::string, WatchReg>> fire;
  {
    std::lock_guard<std::mutex> lock(watch_mu_);
    for (auto* m : {&data_watches_, &child_watches_}) {
      for (auto& [path, regs] : *m) {
        for (auto& r : regs) fire.emplace_back(path, std::move(r));
      }
      m->clear();
    }
  }
  for (auto& [path, r] : fire) r.fn(ZkWatchEvent{ZkWatchEventType::kSessionLost, path});
}

uint64_t ZkSession::RegisterWatch(WatchKind kind, const std::string& path, ZkWatchFn fn) {
  std::lock_guard<std::mutex> lock(watch_mu_);
  const uint64_t id = next_watch_++;
  auto& m = kind == WatchKind::kData ? data_watches_ : child_watches_;
  m[path].push_back(WatchReg{id, std::move(fn)});
  return id;
}

void ZkSession::UnregisterWatch(WatchKind kind, const std::string& path, uint64_t id) {
  std::lock_guard<std::mutex> lock(watch_mu_);
  auto& m = kind == WatchKind::kData ? data_watches_ : child_watches_;
  auto it = m.find(path);
  if (it == m.end()) return;
  auto& regs = it->second;
  regs.erase(
      std::remove_if(regs.begin(), regs.end(), [id](const WatchReg& r) { return r.id == id; }),
      regs.end());
  if (regs.empty()) m.erase(it);
}

// ---------------------------------------------------------------------------
// Accessors

ZkSessionState ZkSession::state() const {
  std::lock_guard<std::mutex> lock(state_mu_);
  return state_;
}
int64_t ZkSession::session_id() const {
  std::lock_guard<std::mutex> lock(state_mu_);
  return session_id_;
}
std::string ZkSession::session_password() const {
  std::lock_guard<std::mutex> lock(state_mu_);
  return password_;
}
uint64_t ZkSession::generation() const {
  std::lock_guard<std::mutex> lock(state_mu_);
  return generation_;
}
milliseconds ZkSession::negotiated_timeout() const {
  std::lock_guard<std::mutex> lock(state_mu_);
  return negotiated_timeout_;
}

absl::Status ZkSession::WaitConnected(milliseconds timeout) const {
  std::unique_lock<std::mutex> lock(state_mu_);
  const bool ok = state_cv_.wait_for(lock, timeout, [this] {
    return state_ == ZkSessionState::kConnected || state_ == ZkSessionState::kClosed ||
           state_ == ZkSessionState::kAuthFailed;
  });
  if (ok && state_ == ZkSessionState::kConnected) return absl::OkStatus();
  return absl::UnavailableError(
      absl::StrCat("ZooKeeper session not connected (state ", Av(ZkSessionStateName(state_)), ")"));
}

int ZkSession::Subscribe(Listener listener) {
  std::lock_guard<std::recursive_mutex> lock(listeners_mu_);
  const int id = next_listener_++;
  listeners_[id] = std::move(listener);
  return id;
}

void ZkSession::Unsubscribe(int id) {
  std::lock_guard<std::recursive_mutex> lock(listeners_mu_);
  listeners_.erase(id);
}

// ---------------------------------------------------------------------------
// Calls

ZkSession::Clock::time_point ZkSession::DeadlineOf(const ZkCall& call) const {
  return Clock::now() + (call.timeout.count() > 0 ? call.timeout : op_timeout_);
}

RetryPolicy ZkSession::NewRetryPolicy() {
  static std::atomic<uint64_t> counter{0};
  const uint64_t seed = options_.retry_seed != 0 ? options_.retry_seed + counter.fetch_add(1)
                                                 : std::random_device{}();
  return RetryPolicy::FromConfig(options_.config, seed);
}

bool ZkSession::Backoff(RetryPolicy& policy, int& retries, Clock::time_point deadline) {
  const auto remaining = std::chrono::duration_cast<milliseconds>(deadline - Clock::now());
  auto wait = policy.NextBackoff(retries++, remaining);
  if (!wait.has_value()) return false;
  std::this_thread::sleep_for(*wait);
  return Clock::now() < deadline;
}

absl::Status ZkSession::WaitUsable(Clock::time_point deadline, bool write, int64_t require_session,
                                   int64_t* session_out) {
  std::unique_lock<std::mutex> lock(state_mu_);
  auto fenced = [&] {
    // After an expiry session_id_ is 0 until the next session exists: a
    // bound call fails at once instead of waiting for a session it may not use.
    return require_session != 0 && session_id_ != require_session;
  };
  auto ready = [&] {
    return state_ == ZkSessionState::kConnected ||
           (!write && state_ == ZkSessionState::kReadOnly) || state_ == ZkSessionState::kClosed ||
           state_ == ZkSessionState::kAuthFailed || fenced();
  };
  if (!state_cv_.wait_until(lock, deadline, ready)) {
    return absl::UnavailableError(absl::StrCat("ZooKeeper not connected within the deadline (",
                                               Av(ZkSessionStateName(state_)), ")"));
  }
  if (state_ == ZkSessionState::kClosed) return absl::CancelledError("ZooKeeper session closed");
  if (state_ == ZkSessionState::kAuthFailed) {
    return absl::PermissionDeniedError("ZooKeeper authentication failed");
  }
  if (fenced()) {
    return absl::FailedPreconditionError(absl::StrCat("fenced: ZooKeeper session ", require_session,
                                                      " is gone (current ", session_id_, ")"));
  }
  *session_out = session_id_;
  return absl::OkStatus();
}

ZkSession::Attempt ZkSession::RunAttempt(
    Clock::time_point deadline, bool write, int64_t require_session,
    const std::function<int(zhandle_t*, Handle*, const void*)>& submit,
    std::shared_ptr<Pending> pending) {
  Attempt a;
  int64_t sid = 0;
  a.pre = WaitUsable(deadline, write, require_session, &sid);
  if (!a.pre.ok()) return a;
  if (Clock::now() >= deadline) {
    a.pre = absl::DeadlineExceededError("deadline passed before the request was sent");
    return a;
  }
  {
    std::shared_lock<std::shared_mutex> lock(handle_mu_);
    if (handle_ == nullptr || handle_->zh == nullptr) {
      a.pre = absl::UnavailableError("no ZooKeeper handle");
      return a;
    }
    const clientid_t* cid = zoo_client_id(handle_->zh);
    const int64_t live = cid != nullptr ? cid->client_id : 0;
    if (require_session != 0 && live != require_session) {
      a.pre = absl::FailedPreconditionError(
          absl::StrCat("fenced: ZooKeeper session ", require_session, " is gone"));
      return a;
    }
    a.session = live;
    auto* ctx = new std::shared_ptr<Pending>(pending);
    const int rc = submit(handle_->zh, handle_.get(), ctx);
    if (rc != ZOK) {
      delete ctx;  // the C client calls no completion when submission fails
      a.rc = rc;
      return a;
    }
  }
  std::unique_lock<std::mutex> lock(pending->mu);
  if (!pending->cv.wait_until(lock, deadline, [&] { return pending->done; })) {
    a.timed_out = true;
    return a;
  }
  a.rc = pending->rc;
  return a;
}

namespace {
absl::Status OutcomeUnknown(std::string_view op, const std::string& path) {
  return absl::DeadlineExceededError(absl::StrCat(
      "zookeeper ", Av(op), " ", path, ": no reply before the deadline; outcome unknown"));
}
}  // namespace

absl::StatusOr<ZkNode> ZkSession::GetImpl(const std::string& path, ZkWatchFn watch,
                                          const ZkCall& call) {
  const auto deadline = DeadlineOf(call);
  RetryPolicy policy = NewRetryPolicy();
  int retries = 0;
  for (;;) {
    auto p = std::make_shared<Pending>();
    uint64_t reg = 0;
    if (watch) reg = RegisterWatch(WatchKind::kData, path, watch);
    Attempt a = RunAttempt(
        deadline, false, call.require_session_id,
        [&](zhandle_t* zh, Handle* h, const void* ctx) {
          if (watch) {
            return zoo_awget(zh, path.c_str(), &ZkSessionCallbacks::PathWatcher, h,
                             &ZkSessionCallbacks::DataDone, ctx);
          }
          return zoo_aget(zh, path.c_str(), 0, &ZkSessionCallbacks::DataDone, ctx);
        },
        p);
    if (watch && (!a.pre.ok() || a.timed_out || a.rc != ZOK)) {
      UnregisterWatch(WatchKind::kData, path, reg);
    }
    if (!a.pre.ok()) return a.pre;
    if (a.timed_out) return OutcomeUnknown("get", path);
    if (a.rc == ZOK) return ZkNode{std::move(p->data), p->stat};
    absl::Status status = ZkStatus(a.rc, "get", path);
    if (!RetriableRead(a.rc) || !Backoff(policy, retries, deadline)) return status;
  }
}

absl::StatusOr<ZkNode> ZkSession::Get(const std::string& path, const ZkCall& call) {
  const auto start = options_.clock->Now();
  auto r = GetImpl(path, nullptr, call);
  metrics_->Record("get", options_.clock->Now() - start, r.status());
  return r;
}

absl::StatusOr<ZkNode> ZkSession::GetAndWatch(const std::string& path, ZkWatchFn watch,
                                              const ZkCall& call) {
  const auto start = options_.clock->Now();
  auto r = GetImpl(path, std::move(watch), call);
  metrics_->Record("get", options_.clock->Now() - start, r.status());
  return r;
}

absl::StatusOr<std::optional<ZkStat>> ZkSession::ExistsImpl(const std::string& path,
                                                            ZkWatchFn watch, const ZkCall& call) {
  const auto deadline = DeadlineOf(call);
  RetryPolicy policy = NewRetryPolicy();
  int retries = 0;
  for (;;) {
    auto p = std::make_shared<Pending>();
    uint64_t reg = 0;
    if (watch) reg = RegisterWatch(WatchKind::kData, path, watch);
    Attempt a = RunAttempt(
        deadline, false, call.require_session_id,
        [&](zhandle_t* zh, Handle* h, const void* ctx) {
          if (watch) {
            return zoo_awexists(zh, path.c_str(), &ZkSessionCallbacks::PathWatcher, h,
                                &ZkSessionCallbacks::StatDone, ctx);
          }
          return zoo_aexists(zh, path.c_str(), 0, &ZkSessionCallbacks::StatDone, ctx);
        },
        p);
    // An exists watch is also set when the node is absent.
    if (watch && (!a.pre.ok() || a.timed_out || (a.rc != ZOK && a.rc != ZNONODE))) {
      UnregisterWatch(WatchKind::kData, path, reg);
    }
    if (!a.pre.ok()) return a.pre;
    if (a.timed_out) return OutcomeUnknown("exists", path);
    if (a.rc == ZOK) return std::optional<ZkStat>(p->stat);
    if (a.rc == ZNONODE) return std::optional<ZkStat>();
    absl::Status status = ZkStatus(a.rc, "exists", path);
    if (!RetriableRead(a.rc) || !Backoff(policy, retries, deadline)) return status;
  }
}

absl::StatusOr<std::optional<ZkStat>> ZkSession::Exists(const std::string& path,
                                                        const ZkCall& call) {
  const auto start = options_.clock->Now();
  auto r = ExistsImpl(path, nullptr, call);
  metrics_->Record("exists", options_.clock->Now() - start, r.status());
  return r;
}

absl::StatusOr<std::optional<ZkStat>> ZkSession::ExistsAndWatch(const std::string& path,
                                                                ZkWatchFn watch,
                                                                const ZkCall& call) {
  const auto start = options_.clock->Now();
  auto r = ExistsImpl(path, std::move(watch), call);
  metrics_->Record("exists", options_.clock->Now() - start, r.status());
  return r;
}

absl::StatusOr<std::vector<std::string>> ZkSession::ChildrenImpl(const std::string& path,
                                                                 ZkWatchFn watch,
                                                                 const ZkCall& call) {
  const auto deadline = DeadlineOf(call);
  RetryPolicy policy = NewRetryPolicy();
  int retries = 0;
  for (;;) {
    auto p = std::make_shared<Pending>();
    uint64_t reg = 0;
    if (watch) reg = RegisterWatch(WatchKind::kChild, path, watch);
    Attempt a = RunAttempt(
        deadline, false, call.require_session_id,
        [&](zhandle_t* zh, Handle* h, const void* ctx) {
          if (watch) {
            return zoo_awget_children(zh, path.c_str(), &ZkSessionCallbacks::PathWatcher, h,
                                      &ZkSessionCallbacks::StringsDone, ctx);
          }
          return zoo_aget_children(zh, path.c_str(), 0, &ZkSessionCallbacks::StringsDone, ctx);
        },
        p);
    if (watch && (!a.pre.ok() || a.timed_out || a.rc != ZOK)) {
      UnregisterWatch(WatchKind::kChild, path, reg);
    }
    if (!a.pre.ok()) return a.pre;
    if (a.timed_out) return OutcomeUnknown("children", path);
    if (a.rc == ZOK) return std::move(p->strings);
    absl::Status status = ZkStatus(a.rc, "children", path);
    if (!RetriableRead(a.rc) || !Backoff(policy, retries, deadline)) return status;
  }
}

absl::StatusOr<std::vector<std::string>> ZkSession::Children(const std::string& path,
                                                             const ZkCall& call) {
  const auto start = options_.clock->Now();
  auto r = ChildrenImpl(path, nullptr, call);
  metrics_->Record("children", options_.clock->Now() - start, r.status());
  return r;
}

absl::StatusOr<std::vector<std::string>> ZkSession::ChildrenAndWatch(const std::string& path,
                                                                     ZkWatchFn watch,
                                                                     const ZkCall& call) {
  const auto start = options_.clock->Now();
  auto r = ChildrenImpl(path, std::move(watch), call);
  metrics_->Record("children", options_.clock->Now() - start, r.status());
  return r;
}

// --- set ---

absl::StatusOr<ZkStat> ZkSession::Set(const std::string& path, std::string_view data, int version,
                                      const ZkCall& call) {
  const auto start = options_.clock->Now();
  const auto deadline = DeadlineOf(call);
  RetryPolicy policy = NewRetryPolicy();
  int retries = 0;
  int expected = version;
  // Read-backs are not bound to the write's session: the new session sees
  // the same data.
  ZkCall read_call{std::chrono::duration_cast<milliseconds>(deadline - Clock::now()), 0};
  auto finish = [&](absl::StatusOr<ZkStat> r) {
    metrics_->Record("set", options_.clock->Now() - start, r.status());
    return r;
  };
  for (;;) {
    auto p = std::make_shared<Pending>();
    Attempt a = RunAttempt(
        deadline, true, call.require_session_id,
        [&](zhandle_t* zh, Handle*, const void* ctx) {
          return zoo_aset(zh, path.c_str(), data.data(), static_cast<int>(data.size()), expected,
                          &ZkSessionCallbacks::StatDone, ctx);
        },
        p);
    if (!a.pre.ok()) return finish(a.pre);
    if (a.timed_out) return finish(OutcomeUnknown("set", path));
    if (a.rc == ZOK) return finish(p->stat);
    absl::Status status = ZkStatus(a.rc, "set", path);
    if (IsAmbiguousWriteCode(a.rc)) {
      read_call.timeout = std::chrono::duration_cast<milliseconds>(deadline - Clock::now());
      if (read_call.timeout.count() <= 0) return finish(OutcomeUnknown("set", path));
      auto node = GetImpl(path, nullptr, read_call);
      if (!node.ok()) {
        metrics_->Ambiguous("set", "unknown");
        if (absl::IsNotFound(node.status())) return finish(node.status());
        return finish(absl::UnavailableError(absl::StrCat(
            status.message(), "; outcome unknown, read-back failed: ", node.status().message())));
      }
      if (expected >= 0) {
        if (node->stat.version == expected + 1 && node->data == data) {
          metrics_->Ambiguous("set", "applied");
          return finish(node->stat);
        }
        if (node->stat.version != expected) {
          metrics_->Ambiguous("set", "unknown");
          return finish(absl::AbortedError(absl::StrCat(
              "zookeeper set ", path, ": ", ZkCodeName(a.rc), " and the node moved from version ",
              expected, " to ", node->stat.version, "; outcome unknown")));
        }
        metrics_->Ambiguous("set", "not_applied");
      } else {
        if (node->data == data) {
          metrics_->Ambiguous("set", "applied");
          return finish(node->stat);
        }
        // Not there (or overwritten since): send again, but only against the
        // version just read, never blindly.
        metrics_->Ambiguous("set", "not_applied");
        expected = node->stat.version;
      }
    } else if (DefinitelyNotApplied(a.rc)) {
      if (call.require_session_id != 0 && (a.rc == ZSESSIONEXPIRED || a.rc == ZINVALIDSTATE)) {
        return finish(absl::FailedPreconditionError(absl::StrCat("fenced: ", status.message())));
      }
    } else {
      return finish(status);
    }
    if (!Backoff(policy, retries, deadline)) return finish(status);
  }
}

// --- create ---

absl::StatusOr<std::string> ZkSession::CreateOnce(const std::string& path, std::string_view data,
                                                  const ZkCreateOptions& options,
                                                  const ZkCall& call) {
  const auto deadline = DeadlineOf(call);
  RetryPolicy policy = NewRetryPolicy();
  int retries = 0;
  const int flags = CreateFlags(options.mode);
  CAcl acl(options.acl);
  bool parents_done = false;
  for (;;) {
    auto p = std::make_shared<Pending>();
    Attempt a = RunAttempt(
        deadline, true, call.require_session_id,
        [&](zhandle_t* zh, Handle*, const void* ctx) {
          return zoo_acreate(zh, path.c_str(), data.data(), static_cast<int>(data.size()),
                             &acl.vector, flags, &ZkSessionCallbacks::StringDone, ctx);
        },
        p);
    if (!a.pre.ok()) return a.pre;
    if (a.timed_out) return OutcomeUnknown("create", path);
    if (a.rc == ZOK) return p->created;
    absl::Status status = ZkStatus(a.rc, "create", path);
    if (a.rc == ZNONODE && options.create_parents && !parents_done) {
      parents_done = true;
      for (const auto& anc : Ancestors(path)) {
        ZkCreateOptions parent_opts;
        parent_opts.acl = options.acl;
        ZkCall c{std::chrono::duration_cast<milliseconds>(deadline - Clock::now()), 0};
        if (c.timeout.count() <= 0) return absl::DeadlineExceededError("create parents: deadline");
        auto r = CreateOnce(anc, "", parent_opts, c);
        if (!r.ok() && !absl::IsAlreadyExists(r.status())) return r.status();
      }
      continue;
    }
    if (IsAmbiguousWriteCode(a.rc)) {
      ZkCall rc_call{std::chrono::duration_cast<milliseconds>(deadline - Clock::now()), 0};
      if (rc_call.timeout.count() <= 0) return OutcomeUnknown("create", path);
      auto ours = [&](const ZkNode& n) {
        return n.data == data &&
               (!IsEphemeral(options.mode) || n.stat.ephemeral_owner == a.session);
      };
      if (!IsSequential(options.mode)) {
        auto node = GetImpl(path, nullptr, rc_call);
        if (node.ok()) {
          if (ours(*node)) {
            metrics_->Ambiguous("create", "applied");
            return path;
          }
          metrics_->Ambiguous("create", "conflict");
          return ZkStatus(ZNODEEXISTS, "create", path);
        }
        if (!absl::IsNotFound(node.status())) {
          metrics_->Ambiguous("create", "unknown");
          return absl::UnavailableError(absl::StrCat(
              status.message(), "; outcome unknown, read-back failed: ", node.status().message()));
        }
        metrics_->Ambiguous("create", "not_applied");
      } else {
        const std::string parent = ParentPath(path);
        const std::string prefix = BaseName(path);
        auto kids = ChildrenImpl(parent, nullptr, rc_call);
        if (!kids.ok()) {
          metrics_->Ambiguous("create", "unknown");
          return absl::UnavailableError(absl::StrCat(
              status.message(), "; outcome unknown, read-back failed: ", kids.status().message()));
        }
        SortBySequence(*kids);
        std::optional<std::string> found;
        for (auto it = kids->rbegin(); it != kids->rend() && !found; ++it) {
          if (it->rfind(prefix, 0) != 0 || it->size() != prefix.size() + 10) continue;
          auto node = GetImpl(JoinPath(parent, *it), nullptr, rc_call);
          if (node.ok() && ours(*node)) found = JoinPath(parent, *it);
        }
        if (found) {
          metrics_->Ambiguous("create", "applied");
          return *found;
        }
        metrics_->Ambiguous("create", "not_applied");
      }
    } else if (DefinitelyNotApplied(a.rc)) {
      if (call.require_session_id != 0 && (a.rc == ZSESSIONEXPIRED || a.rc == ZINVALIDSTATE)) {
        return absl::FailedPreconditionError(absl::StrCat("fenced: ", status.message()));
      }
    } else {
      return status;
    }
    if (!Backoff(policy, retries, deadline)) return status;
  }
}

absl::StatusOr<std::string> ZkSession::Create(const std::string& path, std::string_view data,
                                              const ZkCreateOptions& options, const ZkCall& call) {
  const auto start = options_.clock->Now();
  absl::Status valid = ValidatePath(path);
  absl::StatusOr<std::string> r =
      valid.ok() ? CreateOnce(path, data, options, call) : absl::StatusOr<std::string>(valid);
  metrics_->Record("create", options_.clock->Now() - start, r.status());
  return r;
}

absl::Status ZkSession::EnsurePath(const std::string& path, const ZkCall& call) {
  if (path == "/") return absl::OkStatus();
  ZkCreateOptions opts;
  opts.create_parents = true;
  auto r = Create(path, "", opts, call);
  if (r.ok() || absl::IsAlreadyExists(r.status())) return absl::OkStatus();
  return r.status();
}

// --- delete ---

absl::Status ZkSession::Delete(const std::string& path, int version, const ZkCall& call) {
  const auto start = options_.clock->Now();
  const auto deadline = DeadlineOf(call);
  RetryPolicy policy = NewRetryPolicy();
  int retries = 0;
  auto finish = [&](absl::Status s) {
    metrics_->Record("delete", options_.clock->Now() - start, s);
    return s;
  };
  for (;;) {
    auto p = std::make_shared<Pending>();
    Attempt a = RunAttempt(
        deadline, true, call.require_session_id,
        [&](zhandle_t* zh, Handle*, const void* ctx) {
          return zoo_adelete(zh, path.c_str(), version, &ZkSessionCallbacks::VoidDone, ctx);
        },
        p);
    if (!a.pre.ok()) return finish(a.pre);
    if (a.timed_out) return finish(OutcomeUnknown("delete", path));
    if (a.rc == ZOK) return finish(absl::OkStatus());
    absl::Status status = ZkStatus(a.rc, "delete", path);
    if (IsAmbiguousWriteCode(a.rc)) {
      ZkCall rc_call{std::chrono::duration_cast<milliseconds>(deadline - Clock::now()), 0};
      if (rc_call.timeout.count() <= 0) return finish(OutcomeUnknown("delete", path));
      auto st = ExistsImpl(path, nullptr, rc_call);
      if (!st.ok()) {
        metrics_->Ambiguous("delete", "unknown");
        return finish(absl::UnavailableError(absl::StrCat(
            status.message(), "; outcome unknown, read-back failed: ", st.status().message())));
      }
      if (!st->has_value()) {
        metrics_->Ambiguous("delete", "applied");
        return finish(absl::OkStatus());
      }
      if (version >= 0 && (*st)->version != version) {
        metrics_->Ambiguous("delete", "unknown");
        return finish(ZkStatus(ZBADVERSION, "delete", path));
      }
      metrics_->Ambiguous("delete", "not_applied");
    } else if (DefinitelyNotApplied(a.rc)) {
      if (call.require_session_id != 0 && (a.rc == ZSESSIONEXPIRED || a.rc == ZINVALIDSTATE)) {
        return finish(absl::FailedPreconditionError(absl::StrCat("fenced: ", status.message())));
      }
    } else {
      return finish(status);
    }
    if (!Backoff(policy, retries, deadline)) return finish(status);
  }
}

// --- multi ---

absl::StatusOr<std::vector<ZkOpResult>> ZkSession::Multi(const std::vector<ZkOp>& ops,
                                                         const ZkCall& call, int* failed_op) {
  const auto start = options_.clock->Now();
  const auto deadline = DeadlineOf(call);
  RetryPolicy policy = NewRetryPolicy();
  int retries = 0;
  if (failed_op != nullptr) *failed_op = -1;
  auto finish = [&](absl::StatusOr<std::vector<ZkOpResult>> r) {
    metrics_->Record("multi", options_.clock->Now() - start, r.status());
    return r;
  };
  if (ops.empty()) return finish(std::vector<ZkOpResult>{});
  for (const auto& op : ops) {
    if (auto s = ValidatePath(op.path); !s.ok()) return finish(s);
  }
  for (;;) {
    auto p = std::make_shared<Pending>();
    const size_t n = ops.size();
    p->op_storage = ops;
    p->ops.resize(n);
    p->results.resize(n);
    p->set_stats.resize(n);
    p->path_bufs.resize(n);
    for (size_t i = 0; i < n; ++i) {
      const ZkOp& op = p->op_storage[i];
      switch (op.kind) {
        case ZkOp::Kind::kCreate: {
          p->acls.push_back(std::make_unique<CAcl>(op.acl));
          p->path_bufs[i].resize(op.path.size() + 16);
          zoo_create_op_init(&p->ops[i], op.path.c_str(), op.data.data(),
                             static_cast<int>(op.data.size()), &p->acls.back()->vector,
                             CreateFlags(op.mode), p->path_bufs[i].data(),
                             static_cast<int>(p->path_bufs[i].size()));
          break;
        }
        case ZkOp::Kind::kDelete:
          zoo_delete_op_init(&p->ops[i], op.path.c_str(), op.version);
          break;
        case ZkOp::Kind::kSet:
          zoo_set_op_init(&p->ops[i], op.path.c_str(), op.data.data(),
                          static_cast<int>(op.data.size()), op.version, &p->set_stats[i]);
          break;
        case ZkOp::Kind::kCheck:
          zoo_check_op_init(&p->ops[i], op.path.c_str(), op.version);
          break;
      }
    }
    Attempt a = RunAttempt(
        deadline, true, call.require_session_id,
        [&](zhandle_t* zh, Handle*, const void* ctx) {
          return zoo_amulti(zh, static_cast<int>(n), p->ops.data(), p->results.data(),
                            &ZkSessionCallbacks::VoidDone, ctx);
        },
        p);
    if (!a.pre.ok()) return finish(a.pre);
    if (a.timed_out) return finish(OutcomeUnknown("multi", ops[0].path));
    std::vector<ZkOpResult> results(n);
    if (a.rc == ZOK || !IsAmbiguousWriteCode(a.rc)) {
      int first_failed = -1;
      for (size_t i = 0; i < n; ++i) {
        const int err = a.rc == ZOK ? ZOK : p->results[i].err;
        results[i].status = ZkStatus(err, "multi", ops[i].path);
        if (err != ZOK && first_failed < 0 && err != ZRUNTIMEINCONSISTENCY) {
          first_failed = static_cast<int>(i);
        }
        if (a.rc == ZOK && ops[i].kind == ZkOp::Kind::kCreate) {
          results[i].created_path = p->path_bufs[i].data();
        }
        if (a.rc == ZOK && ops[i].kind == ZkOp::Kind::kSet) {
          results[i].stat = FromStat(p->set_stats[i]);
        }
      }
      if (a.rc == ZOK) return finish(results);
      if (!DefinitelyNotApplied(a.rc) || first_failed >= 0) {
        if (failed_op != nullptr) *failed_op = first_failed;
        absl::Status status =
            first_failed >= 0
                ? ZkStatus(p->results[first_failed].err, absl::StrCat("multi[", first_failed, "]"),
                           ops[first_failed].path)
                : ZkStatus(a.rc, "multi", ops[0].path);
        return finish(status);
      }
      if (call.require_session_id != 0 && (a.rc == ZSESSIONEXPIRED || a.rc == ZINVALIDSTATE)) {
        return finish(absl::FailedPreconditionError(
            absl::StrCat("fenced: ", ZkStatus(a.rc, "multi", ops[0].path).message())));
      }
    } else {
      // Ambiguous: all ops or none were applied, so one write tells.
      absl::Status status = ZkStatus(a.rc, "multi", ops[0].path);
      ZkCall rc_call{std::chrono::duration_cast<milliseconds>(deadline - Clock::now()), 0};
      if (rc_call.timeout.count() <= 0) return finish(OutcomeUnknown("multi", ops[0].path));
      enum class Outcome { kApplied, kNotApplied, kUnknown } outcome = Outcome::kUnknown;
      bool has_write = false;
      for (size_t i = 0; i < n && outcome == Outcome::kUnknown; ++i) {
        const ZkOp& op = ops[i];
        if (op.kind == ZkOp::Kind::kCheck) continue;
        has_write = true;
        if (op.kind == ZkOp::Kind::kSet && op.version >= 0) {
          auto node = GetImpl(op.path, nullptr, rc_call);
          if (!node.ok()) break;
          if (node->stat.version == op.version + 1 && node->data == op.data) {
            outcome = Outcome::kApplied;
            results[i].stat = node->stat;
          } else if (node->stat.version == op.version) {
            outcome = Outcome::kNotApplied;
          }
          break;
        }
        if (op.kind == ZkOp::Kind::kCreate && !IsSequential(op.mode)) {
          auto node = GetImpl(op.path, nullptr, rc_call);
          if (node.ok() && node->data == op.data &&
              (!IsEphemeral(op.mode) || node->stat.ephemeral_owner == a.session)) {
            outcome = Outcome::kApplied;
            results[i].created_path = op.path;
          } else if (absl::IsNotFound(node.status())) {
            outcome = Outcome::kNotApplied;
          }
          break;
        }
      }
      if (!has_write) outcome = Outcome::kNotApplied;  // only checks: nothing to re-apply
      if (outcome == Outcome::kApplied) {
        metrics_->Ambiguous("multi", "applied");
        for (auto& r : results) r.status = absl::OkStatus();
        return finish(results);
      }
      if (outcome == Outcome::kUnknown) {
        metrics_->Ambiguous("multi", "unknown");
        return finish(absl::UnavailableError(
            absl::StrCat(status.message(), "; outcome of the multi could not be determined")));
      }
      metrics_->Ambiguous("multi", "not_applied");
    }
    if (!Backoff(policy, retries, deadline)) {
      return finish(ZkStatus(a.rc, "multi", ops[0].path));
    }
  }
}

// --- async set ---

absl::Status ZkSession::SetAsync(const std::string& path, std::string_view data, int version,
                                 SetCallback done) {
  if (state() != ZkSessionState::kConnected) {
    return absl::UnavailableError(
        absl::StrCat("ZooKeeper not connected (", Av(ZkSessionStateName(state())), ")"));
  }
  auto* ctx = new ZkSessionCallbacks::AsyncSet{this, std::move(done), options_.clock->Now(), path,
                                               0,    ZkStat{}};
  int rc;
  {
    std::shared_lock<std::shared_mutex> lock(handle_mu_);
    if (handle_ == nullptr || handle_->zh == nullptr) {
      rc = ZINVALIDSTATE;
    } else {
      rc = zoo_aset(handle_->zh, path.c_str(), data.data(), static_cast<int>(data.size()), version,
                    &ZkSessionCallbacks::AsyncSetDone, ctx);
    }
  }
  if (rc != ZOK) {
    delete ctx;
    return ZkStatus(rc, "set", path);
  }
  return absl::OkStatus();
}

}  // namespace tempest::coord
