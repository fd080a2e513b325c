// ZkSession's synchronous operations: each one is a ZkRetrySpec (how to send
// it, what a reply means, how to read back an ambiguous write) run by
// RunWithRetries, the one retry loop (retry policy, deadline, fencing).

#include <atomic>
#include <random>
#include <thread>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "common/coord/ambiguous_write.h"
#include "common/coord/zk_c_adapter.h"
#include "common/coord/zk_paths.h"
#include "common/coord/zk_session.h"
#include "common/coord/zk_session_metrics.h"
#include "common/coord/zk_status.h"
#include "common/coord/zk_watch_registry.h"
#include "common/core/status_macros.h"

namespace tempest::coord {

using std::chrono::milliseconds;

// One attempt of a call.
struct ZkAttempt {
  absl::Status pre;        // not sent (not connected in time, fenced, closed)
  bool timed_out = false;  // sent, no reply before the deadline
  int rc = ZOK;
  int64_t session = 0;  // the session it was sent on
};

// What an operation makes of a reply.
struct ZkReply {
  enum class Kind {
    kFinal,      // the call ends with `status`
    kFailed,     // a failure for RunWithRetries to classify (retry, fence, read back)
    kResendNow,  // send again at once, without a backoff (missing parents were made)
  };
  Kind kind = Kind::kFailed;
  absl::Status status;

  static ZkReply Final(absl::Status status = absl::OkStatus()) {
    return {Kind::kFinal, std::move(status)};
  }
  static ZkReply Failed() { return {Kind::kFailed, absl::OkStatus()}; }
  static ZkReply ResendNow() { return {Kind::kResendNow, absl::OkStatus()}; }
};

// One ZkSession operation, as RunWithRetries runs it.
struct ZkRetrySpec {
  std::string_view op;    // "get", "set", ...: for messages
  std::string_view path;  // for messages (a multi names its first op's path)
  bool write = false;
  ZkSession::DeadlineClock::time_point deadline;
  int64_t require_session = 0;  // ZkCall::require_session_id
  // A watch registered before each attempt and removed again unless the
  // reply set it (an exists watch is also set when the node is absent).
  const ZkWatchFn* watch = nullptr;
  ZkWatchRegistry::Kind watch_kind = ZkWatchRegistry::Kind::kData;
  bool watch_set_when_absent = false;
  // Sends one request; `pending` is fresh for every attempt.
  std::function<int(zhandle_t*, ZkSession::Handle*, const void* ctx, ZkSession::Pending&)> submit;
  std::function<ZkReply(int rc, ZkSession::Pending&)> on_reply;
  // Writes only: the read-back of an ambiguous write (ZkSession::ResolveAmbiguous*).
  std::function<std::optional<absl::Status>(const ZkAttempt&, const absl::Status& failure,
                                            const ZkCall& read_call)>
      resolve;
};

namespace {

// This Debian build of absl has its own string_view type.
absl::string_view Av(std::string_view s) { return absl::string_view(s.data(), s.size()); }

absl::Status OutcomeUnknown(std::string_view op, std::string_view path) {
  return absl::DeadlineExceededError(absl::StrCat(
      "zookeeper ", Av(op), " ", Av(path), ": no reply before the deadline; outcome unknown"));
}

absl::Status ReadBackFailed(const absl::Status& failure, const absl::Status& read_back) {
  return absl::UnavailableError(absl::StrCat(
      failure.message(), "; outcome unknown, read-back failed: ", read_back.message()));
}

const absl::Status& StatusOf(const absl::Status& status) { return status; }
template <typename T>
const absl::Status& StatusOf(const absl::StatusOr<T>& result) {
  return result.status();
}

// Runs one public operation and records its latency and result.
template <typename Body>
auto Timed(ZkSessionMetrics& metrics, std::string_view op, Body&& body) {
  const auto start = ZkSession::DeadlineClock::now();
  auto result = body();
  metrics.Record(op, ZkSession::DeadlineClock::now() - start, StatusOf(result));
  return result;
}

milliseconds Remaining(ZkSession::DeadlineClock::time_point deadline) {
  return std::chrono::duration_cast<milliseconds>(deadline - ZkSession::DeadlineClock::now());
}

}  // namespace

// ---------------------------------------------------------------------------
// The retry loop

ZkSession::DeadlineClock::time_point ZkSession::DeadlineOf(const ZkCall& call) const {
  return DeadlineClock::now() + (call.timeout.count() > 0 ? call.timeout : op_timeout_);
}

RetryPolicy ZkSession::NewRetryPolicy() {
  static std::atomic<uint64_t> counter{0};
  const uint64_t seed = options_.retry_seed != 0 ? options_.retry_seed + counter.fetch_add(1)
                                                 : std::random_device{}();
  return RetryPolicy::FromConfig(options_.config, seed);
}

bool ZkSession::Backoff(RetryPolicy& policy, int& retries, DeadlineClock::time_point deadline) {
  auto wait = policy.NextBackoff(retries++, Remaining(deadline));
  if (!wait.has_value()) return false;
  std::this_thread::sleep_for(*wait);
  return DeadlineClock::now() < deadline;
}

ZkRetrySpec ZkSession::ReadSpec(std::string_view op, const std::string& path,
                                const ZkWatchFn& watch, const ZkCall& call) const {
  ZkRetrySpec spec;
  spec.op = op;
  spec.path = path;
  spec.deadline = DeadlineOf(call);
  spec.require_session = call.require_session_id;
  spec.watch = watch ? &watch : nullptr;
  return spec;
}

ZkRetrySpec ZkSession::WriteSpec(std::string_view op, const std::string& path,
                                 DeadlineClock::time_point deadline, const ZkCall& call) const {
  ZkRetrySpec spec;
  spec.op = op;
  spec.path = path;
  spec.write = true;
  spec.deadline = deadline;
  spec.require_session = call.require_session_id;
  return spec;
}

absl::Status ZkSession::RunWithRetries(const ZkRetrySpec& spec) {
  RetryPolicy policy = NewRetryPolicy();
  int retries = 0;
  for (;;) {
    auto pending = std::make_shared<Pending>();
    const ZkAttempt a = RunAttempt(spec, pending);
    if (!a.pre.ok()) return a.pre;
    if (a.timed_out) return OutcomeUnknown(spec.op, spec.path);
    ZkReply reply = spec.on_reply(a.rc, *pending);
    if (reply.kind == ZkReply::Kind::kFinal) return std::move(reply.status);
    if (reply.kind == ZkReply::Kind::kResendNow) continue;
    absl::Status status = ZkStatus(a.rc, spec.op, spec.path);
    switch (ClassifyFailure(a.rc, spec.write)) {
      case ZkFailureKind::kFinal:
        return status;
      case ZkFailureKind::kRetry:
        break;
      case ZkFailureKind::kRetryUnlessFenced:
        if (spec.require_session != 0 && EndsBoundSession(a.rc)) {
          return absl::FailedPreconditionError(absl::StrCat("fenced: ", status.message()));
        }
        break;
      case ZkFailureKind::kAmbiguous: {
        const ZkCall read_call{Remaining(spec.deadline), 0};
        if (read_call.timeout.count() <= 0) return OutcomeUnknown(spec.op, spec.path);
        if (auto resolved = spec.resolve(a, status, read_call)) return *std::move(resolved);
        break;
      }
    }
    if (!Backoff(policy, retries, spec.deadline)) return status;
  }
}

ZkAttempt ZkSession::RunAttempt(const ZkRetrySpec& spec, const std::shared_ptr<Pending>& pending) {
  if (spec.watch == nullptr) return SendOnce(spec, pending);
  const std::string path(spec.path);
  const uint64_t reg = watches_->Register(spec.watch_kind, path, *spec.watch);
  ZkAttempt a = SendOnce(spec, pending);
  const bool watch_set = a.pre.ok() && !a.timed_out &&
                         (a.rc == ZOK || (spec.watch_set_when_absent && a.rc == ZNONODE));
  if (!watch_set) watches_->Unregister(spec.watch_kind, path, reg);
  return a;
}

bool ZkSession::FencedLocked(int64_t require_session) const {
  // After an expiry session_id_ is 0 until the next session exists: a
  // bound call fails at once instead of waiting for a session it may not use.
  return require_session != 0 && session_id_ != require_session;
}

bool ZkSession::UsableOrFinalLocked(bool write, int64_t require_session) const {
  return state_ == ZkSessionState::kConnected ||
         (!write && state_ == ZkSessionState::kReadOnly) || state_ == ZkSessionState::kClosed ||
         state_ == ZkSessionState::kAuthFailed || FencedLocked(require_session);
}

absl::Status ZkSession::WaitUsable(DeadlineClock::time_point deadline, bool write,
                                   int64_t require_session, int64_t* session_out) {
  absl::MutexLock lock(&state_mu_);
  while (!UsableOrFinalLocked(write, require_session)) {
    if (!WaitOnce(state_cv_, state_mu_, deadline)) break;
  }
  if (!UsableOrFinalLocked(write, require_session)) {
    return absl::UnavailableError(absl::StrCat("ZooKeeper not connected within the deadline (",
                                               Av(ZkSessionStateName(state_)), ")"));
  }
  if (state_ == ZkSessionState::kClosed) return absl::CancelledError("ZooKeeper session closed");
  if (state_ == ZkSessionState::kAuthFailed) {
    return absl::PermissionDeniedError("ZooKeeper authentication failed");
  }
  if (FencedLocked(require_session)) {
    return absl::FailedPreconditionError(absl::StrCat("fenced: ZooKeeper session ", require_session,
                                                      " is gone (current ", session_id_, ")"));
  }
  *session_out = session_id_;
  return absl::OkStatus();
}

ZkAttempt ZkSession::SendOnce(const ZkRetrySpec& spec, const std::shared_ptr<Pending>& pending) {
  ZkAttempt a;
  int64_t sid = 0;
  a.pre = WaitUsable(spec.deadline, spec.write, spec.require_session, &sid);
  if (!a.pre.ok()) return a;
  if (DeadlineClock::now() >= spec.deadline) {
    a.pre = absl::DeadlineExceededError("deadline passed before the request was sent");
    return a;
  }
  {
    absl::ReaderMutexLock lock(&handle_mu_);
    if (handle_ == nullptr || handle_->zh == nullptr) {
      a.pre = absl::UnavailableError("no ZooKeeper handle");
      return a;
    }
    const int64_t live = ZkCAdapter::SessionIdOf(handle_->zh);
    if (spec.require_session != 0 && live != spec.require_session) {
      a.pre = absl::FailedPreconditionError(
          absl::StrCat("fenced: ZooKeeper session ", spec.require_session, " is gone"));
      return a;
    }
    a.session = live;
    auto* ctx = new std::shared_ptr<Pending>(pending);
    const int rc = spec.submit(handle_->zh, handle_.get(), ctx, *pending);
    if (rc != ZOK) {
      delete ctx;  // the C client calls no completion when submission fails
      a.rc = rc;
      return a;
    }
  }
  absl::MutexLock lock(&pending->mu);
  while (!pending->done) {
    if (!WaitOnce(pending->cv, pending->mu, spec.deadline)) break;
  }
  if (!pending->done) {
    a.timed_out = true;
    return a;
  }
  a.rc = pending->rc;
  return a;
}

// ---------------------------------------------------------------------------
// Reads

absl::StatusOr<ZkNode> ZkSession::GetImpl(const std::string& path, ZkWatchFn watch,
                                          const ZkCall& call) {
  ZkNode node;
  ZkRetrySpec spec = ReadSpec("get", path, watch, call);
  spec.submit = [&](zhandle_t* zh, Handle* h, const void* ctx, Pending&) {
    return ZkCAdapter::Get(zh, path, watch ? h : nullptr, ctx);
  };
  spec.on_reply = [&](int rc, Pending& p) {
    if (rc != ZOK) return ZkReply::Failed();
    node = ZkNode{std::move(p.data), p.stat};
    return ZkReply::Final();
  };
  RETURN_IF_ERROR(RunWithRetries(spec));
  return node;
}

absl::StatusOr<std::optional<ZkStat>> ZkSession::ExistsImpl(const std::string& path,
                                                            ZkWatchFn watch, const ZkCall& call) {
  std::optional<ZkStat> stat;
  ZkRetrySpec spec = ReadSpec("exists", path, watch, call);
  spec.watch_set_when_absent = true;
  spec.submit = [&](zhandle_t* zh, Handle* h, const void* ctx, Pending&) {
    return ZkCAdapter::Exists(zh, path, watch ? h : nullptr, ctx);
  };
  spec.on_reply = [&](int rc, Pending& p) {
    if (rc == ZOK) stat = p.stat;
    return rc == ZOK || rc == ZNONODE ? ZkReply::Final() : ZkReply::Failed();
  };
  RETURN_IF_ERROR(RunWithRetries(spec));
  return stat;
}

absl::StatusOr<std::vector<std::string>> ZkSession::ChildrenImpl(const std::string& path,
                                                                 ZkWatchFn watch,
                                                                 const ZkCall& call) {
  std::vector<std::string> children;
  ZkRetrySpec spec = ReadSpec("children", path, watch, call);
  spec.watch_kind = ZkWatchRegistry::Kind::kChild;
  spec.submit = [&](zhandle_t* zh, Handle* h, const void* ctx, Pending&) {
    return ZkCAdapter::Children(zh, path, watch ? h : nullptr, ctx);
  };
  spec.on_reply = [&](int rc, Pending& p) {
    if (rc != ZOK) return ZkReply::Failed();
    children = std::move(p.strings);
    return ZkReply::Final();
  };
  RETURN_IF_ERROR(RunWithRetries(spec));
  return children;
}

absl::StatusOr<ZkNode> ZkSession::Get(const std::string& path, const ZkCall& call) {
  return Timed(*metrics_, "get", [&] { return GetImpl(path, nullptr, call); });
}

absl::StatusOr<ZkNode> ZkSession::GetAndWatch(const std::string& path, ZkWatchFn watch,
                                              const ZkCall& call) {
  return Timed(*metrics_, "get", [&] { return GetImpl(path, std::move(watch), call); });
}

absl::StatusOr<std::optional<ZkStat>> ZkSession::Exists(const std::string& path,
                                                        const ZkCall& call) {
  return Timed(*metrics_, "exists", [&] { return ExistsImpl(path, nullptr, call); });
}

absl::StatusOr<std::optional<ZkStat>> ZkSession::ExistsAndWatch(const std::string& path,
                                                                ZkWatchFn watch,
                                                                const ZkCall& call) {
  return Timed(*metrics_, "exists", [&] { return ExistsImpl(path, std::move(watch), call); });
}

absl::StatusOr<std::vector<std::string>> ZkSession::Children(const std::string& path,
                                                             const ZkCall& call) {
  return Timed(*metrics_, "children", [&] { return ChildrenImpl(path, nullptr, call); });
}

absl::StatusOr<std::vector<std::string>> ZkSession::ChildrenAndWatch(const std::string& path,
                                                                     ZkWatchFn watch,
                                                                     const ZkCall& call) {
  return Timed(*metrics_, "children", [&] { return ChildrenImpl(path, std::move(watch), call); });
}

// ---------------------------------------------------------------------------
// Set

absl::StatusOr<ZkStat> ZkSession::Set(const std::string& path, std::string_view data, int version,
                                      const ZkCall& call) {
  return Timed(*metrics_, "set", [&]() -> absl::StatusOr<ZkStat> {
    int expected = version;
    ZkStat stat;
    ZkRetrySpec spec = WriteSpec("set", path, DeadlineOf(call), call);
    spec.submit = [&](zhandle_t* zh, Handle*, const void* ctx, Pending&) {
      return ZkCAdapter::Set(zh, path, data, expected, ctx);
    };
    spec.on_reply = [&](int rc, Pending& p) {
      if (rc != ZOK) return ZkReply::Failed();
      stat = p.stat;
      return ZkReply::Final();
    };
    spec.resolve = [&](const ZkAttempt& a, const absl::Status& failure, const ZkCall& read_call) {
      return ResolveAmbiguousSet(path, data, a.rc, failure, read_call, expected, stat);
    };
    RETURN_IF_ERROR(RunWithRetries(spec));
    return stat;
  });
}

std::optional<absl::Status> ZkSession::ResolveAmbiguousSet(const std::string& path,
                                                           std::string_view data, int rc,
                                                           const absl::Status& failure,
                                                           const ZkCall& read_call, int& expected,
                                                           ZkStat& stat) {
  auto node = GetImpl(path, nullptr, read_call);
  if (!node.ok()) {
    metrics_->Ambiguous("set", WriteOutcomeLabel(WriteOutcome::kUnknown));
    if (absl::IsNotFound(node.status())) return node.status();
    return ReadBackFailed(failure, node.status());
  }
  const WriteOutcome outcome = ResolveSet(expected, data, *node);
  metrics_->Ambiguous("set", WriteOutcomeLabel(outcome));
  if (outcome == WriteOutcome::kApplied) {
    stat = node->stat;
    return absl::OkStatus();
  }
  if (outcome == WriteOutcome::kUnknown) {
    return absl::AbortedError(absl::StrCat("zookeeper set ", path, ": ", ZkCodeName(rc),
                                           " and the node moved from version ", expected, " to ",
                                           node->stat.version, "; outcome unknown"));
  }
  // Not there (or overwritten since): send again, but only against the
  // version just read, never blindly.
  if (expected < 0) expected = node->stat.version;
  return std::nullopt;
}

// ---------------------------------------------------------------------------
// Create

absl::StatusOr<std::string> ZkSession::CreateOnce(const std::string& path, std::string_view data,
                                                  const ZkCreateOptions& options,
                                                  const ZkCall& call) {
  const auto deadline = DeadlineOf(call);
  const ZkAcl chosen = options.acl.has_value() ? *options.acl : acl_policy().For(options.access);
  const CAcl acl(chosen);
  bool parents_done = false;
  std::string created;
  ZkRetrySpec spec = WriteSpec("create", path, deadline, call);
  spec.submit = [&](zhandle_t* zh, Handle*, const void* ctx, Pending&) {
    return ZkCAdapter::Create(zh, path, data, acl, options.mode, ctx);
  };
  spec.on_reply = [&](int rc, Pending& p) {
    if (rc == ZOK) {
      created = p.created;
      return ZkReply::Final();
    }
    if (rc != ZNONODE || !options.create_parents || parents_done) return ZkReply::Failed();
    parents_done = true;
    absl::Status parents = CreateAncestors(path, chosen, deadline);
    return parents.ok() ? ZkReply::ResendNow() : ZkReply::Final(std::move(parents));
  };
  spec.resolve = [&](const ZkAttempt& a, const absl::Status& failure, const ZkCall& read_call) {
    return ResolveAmbiguousCreate(path, data, options.mode, a.session, failure, read_call, created);
  };
  RETURN_IF_ERROR(RunWithRetries(spec));
  return created;
}

absl::Status ZkSession::CreateAncestors(const std::string& path, const ZkAcl& acl,
                                        DeadlineClock::time_point deadline) {
  for (const auto& ancestor : Ancestors(path)) {
    ZkCreateOptions parent_options;
    parent_options.acl = acl;
    const ZkCall parent_call{Remaining(deadline), 0};
    if (parent_call.timeout.count() <= 0) {
      return absl::DeadlineExceededError("create parents: deadline");
    }
    auto r = CreateOnce(ancestor, "", parent_options, parent_call);
    if (r.ok() || absl::IsAlreadyExists(r.status())) continue;
    // ZooKeeper checks the parent's ACL before whether the node exists: an
    // identity that may not create in, say, the cluster root still finds
    // its own topology's directories there (a worker's identity does).
    if (absl::IsPermissionDenied(r.status())) {
      auto exists = ExistsImpl(ancestor, nullptr, parent_call);
      if (exists.ok() && exists->has_value()) continue;
    }
    return r.status();
  }
  return absl::OkStatus();
}

std::optional<absl::Status> ZkSession::ResolveAmbiguousCreate(
    const std::string& path, std::string_view data, ZkCreateMode mode, int64_t session,
    const absl::Status& failure, const ZkCall& read_call, std::string& created) {
  if (IsSequential(mode)) {
    return FindSequentialCreate(path, data, mode, session, failure, read_call, created);
  }
  auto node = GetImpl(path, nullptr, read_call);
  if (!node.ok() && !absl::IsNotFound(node.status())) {
    metrics_->Ambiguous("create", WriteOutcomeLabel(WriteOutcome::kUnknown));
    return ReadBackFailed(failure, node.status());
  }
  const WriteOutcome outcome =
      ResolveCreate(data, mode, session, node.ok() ? std::optional<ZkNode>(*node) : std::nullopt);
  metrics_->Ambiguous("create", WriteOutcomeLabel(outcome));
  if (outcome == WriteOutcome::kApplied) {
    created = path;
    return absl::OkStatus();
  }
  if (outcome == WriteOutcome::kConflict) return ZkStatus(ZNODEEXISTS, "create", path);
  return std::nullopt;
}

std::optional<absl::Status> ZkSession::FindSequentialCreate(
    const std::string& path, std::string_view data, ZkCreateMode mode, int64_t session,
    const absl::Status& failure, const ZkCall& read_call, std::string& created) {
  const std::string parent = ParentPath(path);
  auto children = ChildrenImpl(parent, nullptr, read_call);
  if (!children.ok()) {
    metrics_->Ambiguous("create", WriteOutcomeLabel(WriteOutcome::kUnknown));
    return ReadBackFailed(failure, children.status());
  }
  for (const std::string& name : SequentialCreateCandidates(*std::move(children), BaseName(path))) {
    const std::string candidate = JoinPath(parent, name);
    auto node = GetImpl(candidate, nullptr, read_call);
    if (node.ok() && IsOurCreate(*node, data, mode, session)) {
      metrics_->Ambiguous("create", WriteOutcomeLabel(WriteOutcome::kApplied));
      created = candidate;
      return absl::OkStatus();
    }
  }
  metrics_->Ambiguous("create", WriteOutcomeLabel(WriteOutcome::kNotApplied));
  return std::nullopt;
}

absl::StatusOr<std::string> ZkSession::Create(const std::string& path, std::string_view data,
                                              const ZkCreateOptions& options, const ZkCall& call) {
  return Timed(*metrics_, "create", [&]() -> absl::StatusOr<std::string> {
    RETURN_IF_ERROR(ValidatePath(path));
    return CreateOnce(path, data, options, call);
  });
}

absl::Status ZkSession::EnsurePath(const std::string& path, const ZkCall& call,
                                   ZkNodeAccess access) {
  if (path == "/") return absl::OkStatus();
  ZkCreateOptions opts;
  opts.create_parents = true;
  opts.access = access;
  auto r = Create(path, "", opts, call);
  if (r.ok() || absl::IsAlreadyExists(r.status())) return absl::OkStatus();
  return r.status();
}

absl::Status ZkSession::VerifyAccess(const std::string& path, const ZkCall& call) {
  absl::StatusOr<ZkNode> node = Get(path, call);
  if (node.ok() || absl::IsNotFound(node.status())) return absl::OkStatus();
  if (!absl::IsPermissionDenied(node.status())) return node.status();
  std::string who = "no credentials";
  if (options_.config.auth.enabled()) {
    who = absl::StrCat("credentials ", options_.config.auth.Identity());
  } else if (!options_.auth.empty()) {
    who = absl::StrCat("credentials of scheme ", options_.auth.front().first);
  }
  return absl::PermissionDeniedError(absl::StrCat(
      "ZooKeeper denies ", who, " access to ", path,
      " (its ACL belongs to another identity: check storm.zookeeper.auth.scheme and "
      "storm.zookeeper.auth.payload)"));
}

// ---------------------------------------------------------------------------
// ACLs

absl::StatusOr<std::pair<ZkAcl, ZkStat>> ZkSession::GetAcl(const std::string& path,
                                                           const ZkCall& call) {
  return Timed(*metrics_, "get_acl", [&]() -> absl::StatusOr<std::pair<ZkAcl, ZkStat>> {
    std::pair<ZkAcl, ZkStat> out;
    ZkRetrySpec spec = ReadSpec("get_acl", path, nullptr, call);
    spec.submit = [&](zhandle_t* zh, Handle*, const void* ctx, Pending&) {
      return ZkCAdapter::GetAcl(zh, path, ctx);
    };
    spec.on_reply = [&](int rc, Pending& p) {
      if (rc != ZOK) return ZkReply::Failed();
      out = {std::move(p.acl), p.stat};
      return ZkReply::Final();
    };
    RETURN_IF_ERROR(RunWithRetries(spec));
    return out;
  });
}

absl::Status ZkSession::SetAcl(const std::string& path, const ZkAcl& acl, int version,
                               const ZkCall& call) {
  return Timed(*metrics_, "set_acl", [&] {
    const CAcl c_acl(acl);
    ZkRetrySpec spec = WriteSpec("set_acl", path, DeadlineOf(call), call);
    spec.submit = [&](zhandle_t* zh, Handle*, const void* ctx, Pending&) {
      return ZkCAdapter::SetAcl(zh, path, version, c_acl, ctx);
    };
    spec.on_reply = [](int rc, Pending&) {
      return rc == ZOK ? ZkReply::Final() : ZkReply::Failed();
    };
    // Setting the same ACL twice leaves the same ACL: send it again.
    spec.resolve = [](const ZkAttempt&, const absl::Status&, const ZkCall&) {
      return std::optional<absl::Status>();
    };
    return RunWithRetries(spec);
  });
}

// ---------------------------------------------------------------------------
// Delete

absl::Status ZkSession::Delete(const std::string& path, int version, const ZkCall& call) {
  return Timed(*metrics_, "delete", [&] {
    ZkRetrySpec spec = WriteSpec("delete", path, DeadlineOf(call), call);
    spec.submit = [&](zhandle_t* zh, Handle*, const void* ctx, Pending&) {
      return ZkCAdapter::Delete(zh, path, version, ctx);
    };
    spec.on_reply = [](int rc, Pending&) {
      return rc == ZOK ? ZkReply::Final() : ZkReply::Failed();
    };
    spec.resolve = [&](const ZkAttempt&, const absl::Status& failure, const ZkCall& read_call) {
      return ResolveAmbiguousDelete(path, version, failure, read_call);
    };
    return RunWithRetries(spec);
  });
}

std::optional<absl::Status> ZkSession::ResolveAmbiguousDelete(const std::string& path, int version,
                                                              const absl::Status& failure,
                                                              const ZkCall& read_call) {
  auto stat = ExistsImpl(path, nullptr, read_call);
  if (!stat.ok()) {
    metrics_->Ambiguous("delete", WriteOutcomeLabel(WriteOutcome::kUnknown));
    return ReadBackFailed(failure, stat.status());
  }
  const WriteOutcome outcome = ResolveDelete(version, *stat);
  metrics_->Ambiguous("delete", WriteOutcomeLabel(outcome));
  if (outcome == WriteOutcome::kApplied) return absl::OkStatus();
  if (outcome == WriteOutcome::kUnknown) return ZkStatus(ZBADVERSION, "delete", path);
  return std::nullopt;
}

// ---------------------------------------------------------------------------
// Multi

absl::StatusOr<std::vector<ZkOpResult>> ZkSession::Multi(const std::vector<ZkOp>& ops,
                                                         const ZkCall& call, int* failed_op) {
  return Timed(*metrics_, "multi", [&] { return MultiOnce(ops, call, failed_op); });
}

absl::StatusOr<std::vector<ZkOpResult>> ZkSession::MultiOnce(const std::vector<ZkOp>& ops,
                                                             const ZkCall& call, int* failed_op) {
  const auto deadline = DeadlineOf(call);
  if (failed_op != nullptr) *failed_op = -1;
  if (ops.empty()) return std::vector<ZkOpResult>{};
  for (const auto& op : ops) {
    RETURN_IF_ERROR(ValidatePath(op.path));
  }
  std::vector<ZkOpResult> results;
  ZkRetrySpec spec = WriteSpec("multi", ops[0].path, deadline, call);
  spec.submit = [&](zhandle_t* zh, Handle*, const void* ctx, Pending& p) {
    ZkCAdapter::PrepareMulti(ops, acl_policy(), p);
    return ZkCAdapter::SubmitMulti(zh, p, ctx);
  };
  spec.on_reply = [&](int rc, Pending& p) {
    if (IsAmbiguousWriteCode(rc)) return ZkReply::Failed();
    results = ZkCAdapter::MultiResults(ops, rc, p);
    if (rc == ZOK) return ZkReply::Final();
    const int first_failed = ZkCAdapter::FirstFailedOp(p);
    // A multi that definitely did not happen, with no op to blame, is retried.
    if (ClassifyFailure(rc, /*write=*/true) != ZkFailureKind::kFinal && first_failed < 0) {
      return ZkReply::Failed();
    }
    if (failed_op != nullptr) *failed_op = first_failed;
    return ZkReply::Final(first_failed >= 0 ? ZkStatus(p.results[first_failed].err,
                                                       absl::StrCat("multi[", first_failed, "]"),
                                                       ops[first_failed].path)
                                            : ZkStatus(rc, "multi", ops[0].path));
  };
  spec.resolve = [&](const ZkAttempt& a, const absl::Status& failure, const ZkCall& read_call) {
    return ResolveAmbiguousMulti(ops, a.session, failure, read_call, results);
  };
  RETURN_IF_ERROR(RunWithRetries(spec));
  return results;
}

std::optional<absl::Status> ZkSession::ResolveAmbiguousMulti(const std::vector<ZkOp>& ops,
                                                             int64_t session,
                                                             const absl::Status& failure,
                                                             const ZkCall& read_call,
                                                             std::vector<ZkOpResult>& results) {
  results.assign(ops.size(), ZkOpResult{});
  WriteOutcome outcome = ResolveMultiWithoutProbe(ops);
  if (const std::optional<size_t> probe = MultiProbeIndex(ops)) {
    const ZkOp& op = ops[*probe];
    auto node = GetImpl(op.path, nullptr, read_call);
    outcome = ResolveMultiProbe(op, session, node);
    if (outcome == WriteOutcome::kApplied && op.kind == ZkOp::Kind::kSet) {
      results[*probe].stat = node->stat;
    } else if (outcome == WriteOutcome::kApplied) {
      results[*probe].created_path = op.path;
    }
  }
  metrics_->Ambiguous("multi", WriteOutcomeLabel(outcome));
  if (outcome == WriteOutcome::kApplied) {
    for (auto& r : results) r.status = absl::OkStatus();
    return absl::OkStatus();
  }
  if (outcome == WriteOutcome::kUnknown) {
    return absl::UnavailableError(
        absl::StrCat(failure.message(), "; outcome of the multi could not be determined"));
  }
  return std::nullopt;
}

// ---------------------------------------------------------------------------
// Pipelined set

absl::Status ZkSession::SetAsync(const std::string& path, std::string_view data, int version,
                                 SetCallback done) {
  if (state() != ZkSessionState::kConnected) {
    return absl::UnavailableError(
        absl::StrCat("ZooKeeper not connected (", Av(ZkSessionStateName(state())), ")"));
  }
  int rc;
  {
    absl::ReaderMutexLock lock(&handle_mu_);
    if (handle_ == nullptr || handle_->zh == nullptr) {
      rc = ZINVALIDSTATE;
    } else {
      rc = ZkCAdapter::SetAsync(handle_->zh, this, path, data, version, std::move(done));
    }
  }
  if (rc != ZOK) return ZkStatus(rc, "set", path);
  return absl::OkStatus();
}

}  // namespace tempest::coord
