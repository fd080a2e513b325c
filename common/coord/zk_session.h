#ifndef TEMPEST_COMMON_COORD_ZK_SESSION_H_
#define TEMPEST_COMMON_COORD_ZK_SESSION_H_

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "common/coord/retry_policy.h"
#include "common/coord/zk_auth.h"
#include "common/core/clock.h"
#include "common/core/metrics_registry.h"

// The C client's handle type, so this header need not include zookeeper.h.
typedef struct _zhandle zhandle_t;

namespace tempest::coord {

// The session as its owners see it.
//   kConnecting: no session established yet on the current handle.
//   kConnected:  a live session on a read-write server.
//   kReadOnly:   connected to a server that lost its quorum and serves reads
//                only (needs Options::allow_read_only); writes fail.
//   kSuspended:  disconnected; the session may still be alive on the server.
//   kLost:       the server expired the session, or our own timer decided it
//                (suspended a quarter of the negotiated timeout, which with
//                the C client's 2/3 silence detection is 11/12 of the timeout
//                since the ensemble last answered: SuspensionBudget). Ownership and
//                leadership must be considered gone. After a server-side expiry
//                a new session follows (kConnecting); after a timer-only loss the
//                old session may still come back (kConnected, same session id).
//   kAuthFailed: the server rejected our credentials; terminal.
//   kClosed:     Close() was called; terminal.
enum class ZkSessionState {
  kConnecting,
  kConnected,
  kReadOnly,
  kSuspended,
  kLost,
  kAuthFailed,
  kClosed
};
std::string_view ZkSessionStateName(ZkSessionState state);

struct ZkSessionEvent {
  ZkSessionState previous = ZkSessionState::kConnecting;
  ZkSessionState state = ZkSessionState::kConnecting;
  int64_t session_id = 0;       // the session the event is about (0 before one exists)
  uint64_t generation = 0;      // +1 for every new handle (i.e. every new session attempt)
  bool by_local_timer = false;  // kLost decided by our own timer, not by the server
};

// Mirror of ZooKeeper's Stat.
struct ZkStat {
  int64_t czxid = 0, mzxid = 0, ctime = 0, mtime = 0;
  int32_t version = 0, cversion = 0, aversion = 0;
  int64_t ephemeral_owner = 0;
  int32_t data_length = 0, num_children = 0;
  int64_t pzxid = 0;
};

struct ZkNode {
  std::string data;
  ZkStat stat;
};

enum class ZkCreateMode { kPersistent, kEphemeral, kPersistentSequential, kEphemeralSequential };
bool IsEphemeral(ZkCreateMode mode);
bool IsSequential(ZkCreateMode mode);

// ZkAcl, OpenAcl, CreatorAllAcl and ZkAclPolicy are in zk_auth.h.
struct ZkCreateOptions {
  ZkCreateMode mode = ZkCreateMode::kPersistent;
  // nullopt: the session's policy decides (ZkSession::acl_policy()), from
  // `access`. Only tests and tools that mean a particular ACL set one.
  std::optional<ZkAcl> acl;
  ZkNodeAccess access = ZkNodeAccess::kPrivate;
  bool create_parents = false;  // missing ancestors are created persistent, empty, same ACL
};

// Per-call settings.
struct ZkCall {
  // Overall deadline of the call, retries and read-backs included;
  // 0 means Options::operation_timeout.
  std::chrono::milliseconds timeout{0};
  // Non-zero: the request is only ever sent on this session; if the session
  // has changed the call fails with FailedPrecondition ("fenced"). Recipes use
  // it so a write made under an old ownership is never replayed on a new
  // session.
  int64_t require_session_id = 0;
};

enum class ZkWatchEventType { kCreated, kDeleted, kChanged, kChildren, kSessionLost };
struct ZkWatchEvent {
  ZkWatchEventType type = ZkWatchEventType::kChanged;
  std::string path;
};
// One-shot watch callback; runs on the session's dispatcher thread and must
// not block (enqueue work to your own thread). kSessionLost means the session
// that held the watch has ended, so the watch will never fire.
using ZkWatchFn = std::function<void(const ZkWatchEvent&)>;

// One operation of an atomic Multi.
struct ZkOp {
  enum class Kind { kCreate, kDelete, kSet, kCheck };
  Kind kind = Kind::kCheck;
  std::string path;
  std::string data;
  int version = -1;
  ZkCreateMode mode = ZkCreateMode::kPersistent;
  std::optional<ZkAcl> acl;  // kCreate; nullopt: the session's policy, from `access`
  ZkNodeAccess access = ZkNodeAccess::kPrivate;

  static ZkOp Create(std::string path, std::string data,
                     ZkCreateMode mode = ZkCreateMode::kPersistent,
                     std::optional<ZkAcl> acl = std::nullopt,
                     ZkNodeAccess access = ZkNodeAccess::kPrivate);
  static ZkOp Delete(std::string path, int version = -1);
  static ZkOp Set(std::string path, std::string data, int version = -1);
  static ZkOp Check(std::string path, int version);
};
struct ZkOpResult {
  absl::Status status;
  std::string created_path;  // kCreate
  ZkStat stat;               // kSet (when known)
};

class ZkSessionMetrics;
class ZkWatchRegistry;
struct ZkRetrySpec;
struct ZkAttempt;

// Sends the ZooKeeper C client's own log lines (reconnects, expiries), for
// every session of this process, to `stream` instead of stderr; nullptr
// restores stderr. The stream must stay open while sessions exist. For
// commands whose stderr is for people, such as `tempest study`.
void SetZkClientLogStream(std::FILE* stream);

// One ZooKeeper session at a time over the multi-threaded C client, with an
// explicit state machine (see ZkSessionState), retries with backoff under a
// per-call deadline, read-back resolution of ambiguous writes, watches and
// metrics.
//
// Owns: one zhandle_t (replaced only after the server expired the session,
// never because of a mere disconnect) and a dispatcher thread. The C client's
// own threads only enqueue events; the dispatcher thread applies them, runs
// the local session timer, replaces expired handles and calls listeners, watch
// callbacks and SetAsync callbacks (all of which must not block).
//
// Thread-safe: any thread may call any method, except that synchronous
// operations must not be called from listeners or watch callbacks (they would
// stall event delivery until their deadline). Synchronous operations block
// the caller for at most their deadline.
//
// Ambiguous writes: a write that fails with ZCONNECTIONLOSS or
// ZOPERATIONTIMEOUT is resolved by reading the node back once connected:
//   set(version v): version v+1 with our data -> applied; still v -> not
//     applied, retried; anything else -> Aborted (outcome unknown).
//   set(-1): our data present -> applied; otherwise retried as set(read version).
//   create: node present with our data (and, if ephemeral, our session as
//     owner) -> applied; absent -> retried; otherwise AlreadyExists.
//     Sequential creates look for a sibling with our prefix and data, so the
//     data must be unique (recipes put an owner id in it).
//   delete: absent -> applied; present at the expected version -> retried.
//   multi: resolved through its first resolvable write (all or nothing).
// Nothing is re-sent without such a check.
class ZkSession {
 public:
  struct Options {
    // "host:port,host:port" optionally followed by "/chroot".
    std::string connect_string;
    // A chroot to use if connect_string has none.
    std::string chroot;
    // Create the chroot node (persistent, open ACL) if it is missing.
    bool create_chroot = true;
    // Timeouts and retry budget (Storm's keys and defaults).
    ZkClientConfig config;
    // Default deadline of one call; 0 means config.connection_timeout.
    std::chrono::milliseconds operation_timeout{0};
    // (scheme, credential) pairs passed to zoo_add_auth on every new handle,
    // e.g. {"digest", "user:password"}, besides config.auth (Storm's
    // storm.zookeeper.auth.* keys). Any credentials make every node this
    // session creates creator-only (see acl_policy()).
    std::vector<std::pair<std::string, std::string>> auth;
    // Ask for read-only mode (ZOO_READONLY) so a partitioned server with
    // readonlymode.enabled keeps serving reads; reported as kReadOnly.
    bool allow_read_only = false;
    core::Clock* clock = &core::RealClock();
    std::reference_wrapper<core::MetricsRegistry> metrics = core::MetricsRegistry::Global();
    uint64_t retry_seed = 0;  // 0: random
  };

  using Listener = std::function<void(const ZkSessionEvent&)>;
  using SetCallback = std::function<void(absl::StatusOr<ZkStat>)>;

  // Starts connecting; does not wait for the session (see WaitConnected). If a
  // chroot must be created, waits up to config.connection_timeout for that.
  static absl::StatusOr<std::unique_ptr<ZkSession>> Create(Options options);
  ~ZkSession();
  ZkSession(const ZkSession&) = delete;
  ZkSession& operator=(const ZkSession&) = delete;

  // Closes the handle (the server ends the session, so its ephemerals go),
  // fails pending calls with Cancelled and stops the dispatcher. Idempotent.
  // Not from a listener or callback (it joins the dispatcher thread).
  void Close();

  ZkSessionState state() const;
  // Id and password of the current session (0/"" before one exists): what
  // ZkEnsemble::ExpireSession needs.
  int64_t session_id() const;
  std::string session_password() const;
  uint64_t generation() const;
  std::chrono::milliseconds negotiated_timeout() const;
  // How long a suspended session may stay suspended before our own timer
  // declares it lost: a quarter of the negotiated timeout (see CheckLocalTimer).
  static std::chrono::milliseconds SuspensionBudget(std::chrono::milliseconds negotiated_timeout);
  // The ACL rule of this session's creates: creator-only when it has
  // credentials, open otherwise (zk_auth.h).
  ZkAclPolicy acl_policy() const;
  // True while writes can be sent: kConnected.
  bool IsConnected() const { return state() == ZkSessionState::kConnected; }

  // Waits until kConnected (or a terminal state / the timeout).
  absl::Status WaitConnected(std::chrono::milliseconds timeout) const;

  // Listeners run on the dispatcher thread, in order, for every transition.
  // Once Unsubscribe returns, the listener is not running and never runs
  // again (it waits for a running call; a listener may unsubscribe itself).
  int Subscribe(Listener listener);
  void Unsubscribe(int id);

  // --- synchronous operations (deadline = call.timeout) ---
  // Returns the created path (differs from `path` for sequential nodes).
  absl::StatusOr<std::string> Create(const std::string& path, std::string_view data,
                                     const ZkCreateOptions& options = {}, const ZkCall& call = {});
  absl::StatusOr<ZkNode> Get(const std::string& path, const ZkCall& call = {});
  absl::StatusOr<ZkNode> GetAndWatch(const std::string& path, ZkWatchFn watch,
                                     const ZkCall& call = {});
  absl::StatusOr<ZkStat> Set(const std::string& path, std::string_view data, int version = -1,
                             const ZkCall& call = {});
  absl::Status Delete(const std::string& path, int version = -1, const ZkCall& call = {});
  // nullopt if the node does not exist.
  absl::StatusOr<std::optional<ZkStat>> Exists(const std::string& path, const ZkCall& call = {});
  // The watch fires on creation, change or deletion (also when absent now).
  absl::StatusOr<std::optional<ZkStat>> ExistsAndWatch(const std::string& path, ZkWatchFn watch,
                                                       const ZkCall& call = {});
  absl::StatusOr<std::vector<std::string>> Children(const std::string& path,
                                                    const ZkCall& call = {});
  absl::StatusOr<std::vector<std::string>> ChildrenAndWatch(const std::string& path,
                                                            ZkWatchFn watch,
                                                            const ZkCall& call = {});
  // The node's ACL and stat. ZooKeeper reports `auth` entries resolved to
  // the creator's ids (e.g. digest:user:base64-sha1).
  absl::StatusOr<std::pair<ZkAcl, ZkStat>> GetAcl(const std::string& path, const ZkCall& call = {});
  // Replaces the node's ACL (needs ADMIN on it); `version` is its aversion, -1 any.
  // Sending it again is harmless, so an ambiguous reply is simply retried.
  absl::Status SetAcl(const std::string& path, const ZkAcl& acl, int version = -1,
                      const ZkCall& call = {});
  // The ids ZooKeeper knows this session by, e.g. digest:user:hash for
  // storm.zookeeper.auth.* (what `auth` ACL entries become); empty without
  // credentials.
  std::vector<ZkAclEntry> Identities() const;
  // Creates `path` and its ancestors (persistent, empty) where missing.
  absl::Status EnsurePath(const std::string& path, const ZkCall& call = {},
                          ZkNodeAccess access = ZkNodeAccess::kPrivate);
  // Whether this session's credentials may read `path`: OK when it is
  // readable or absent; PermissionDenied naming the path and the identity
  // when the node's ACL shuts us out (e.g. a wrong
  // storm.zookeeper.auth.payload) or the server rejected the credentials.
  // Daemons call it at start so wrong credentials fail there, once.
  absl::Status VerifyAccess(const std::string& path, const ZkCall& call = {});
  // Atomic multi. On failure, `failed_op` (if given) receives the index of
  // the first failing op.
  absl::StatusOr<std::vector<ZkOpResult>> Multi(const std::vector<ZkOp>& ops,
                                                const ZkCall& call = {}, int* failed_op = nullptr);

  // --- pipelined path for hot loops ---
  // Sends a set without waiting. Returns Unavailable at once (callback not
  // called) when not kConnected. Otherwise `done` runs exactly once on the
  // dispatcher thread. No retry, no read-back: the caller owns ambiguity
  // (ZkCodeOf(status) tells ZCONNECTIONLOSS apart).
  absl::Status SetAsync(const std::string& path, std::string_view data, int version,
                        SetCallback done);

  // Handle and per-call internals (defined in zk_c_adapter.h).
  struct Handle;
  struct Pending;

  // Call deadlines, backoff sleeps and op latencies are on the steady clock,
  // not on Options::clock: they bound real waits on condition variables and
  // real sleeps, so a test's fake clock that stands still must not stretch a
  // call's deadline forever (nor report fake latencies for real waits).
  // Options::clock drives the one decision tests control, the local session
  // timer (see CheckLocalTimer).
  using DeadlineClock = std::chrono::steady_clock;

 private:
  friend struct ZkCAdapter;

  explicit ZkSession(Options options);
  absl::Status Start();

  // Dispatcher side (zk_session_dispatcher.cc).
  void Enqueue(std::function<void()> task);
  void DispatchLoop();
  void OnSessionEvent(uint64_t generation, int zk_state);
  void OnWatchEvent(uint64_t generation, const ZkWatchEvent& event);
  void CheckLocalTimer();
  void Transition(ZkSessionState next, bool by_local_timer = false);
  // Waits on `cv` (which `mu` guards) once, at most until `deadline` on the
  // steady clock; false, without waiting, once the deadline has passed.
  static bool WaitOnce(absl::CondVar& cv, absl::Mutex& mu, DeadlineClock::time_point deadline)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu);
  // Calls each listener with `event`, in order, outside listeners_mu_.
  void NotifyListeners(const ZkSessionEvent& event);
  void ReplaceHandle();
  std::unique_ptr<Handle> NewHandle(uint64_t generation);

  // Caller side (zk_session_calls.cc). Every operation is one ZkRetrySpec
  // run by RunWithRetries, the only retry loop.
  DeadlineClock::time_point DeadlineOf(const ZkCall& call) const;
  ZkRetrySpec ReadSpec(std::string_view op, const std::string& path, const ZkWatchFn& watch,
                       const ZkCall& call) const;
  ZkRetrySpec WriteSpec(std::string_view op, const std::string& path,
                        DeadlineClock::time_point deadline, const ZkCall& call) const;
  absl::Status RunWithRetries(const ZkRetrySpec& spec);
  ZkAttempt RunAttempt(const ZkRetrySpec& spec, const std::shared_ptr<Pending>& pending);
  ZkAttempt SendOnce(const ZkRetrySpec& spec, const std::shared_ptr<Pending>& pending);
  absl::Status WaitUsable(DeadlineClock::time_point deadline, bool write, int64_t require_session,
                          int64_t* session_out);
  // A call bound to `require_session` (non-zero) that may no longer be sent.
  bool FencedLocked(int64_t require_session) const ABSL_SHARED_LOCKS_REQUIRED(state_mu_);
  // Whether a call may stop waiting for the session (to send, or to fail).
  bool UsableOrFinalLocked(bool write, int64_t require_session) const
      ABSL_SHARED_LOCKS_REQUIRED(state_mu_);
  bool Backoff(RetryPolicy& policy, int& retries, DeadlineClock::time_point deadline);
  RetryPolicy NewRetryPolicy();

  absl::StatusOr<ZkNode> GetImpl(const std::string& path, ZkWatchFn watch, const ZkCall& call);
  absl::StatusOr<std::optional<ZkStat>> ExistsImpl(const std::string& path, ZkWatchFn watch,
                                                   const ZkCall& call);
  absl::StatusOr<std::vector<std::string>> ChildrenImpl(const std::string& path, ZkWatchFn watch,
                                                        const ZkCall& call);
  absl::StatusOr<std::string> CreateOnce(const std::string& path, std::string_view data,
                                         const ZkCreateOptions& options, const ZkCall& call);
  absl::Status CreateAncestors(const std::string& path, const ZkAcl& acl,
                               DeadlineClock::time_point deadline);
  absl::StatusOr<std::vector<ZkOpResult>> MultiOnce(const std::vector<ZkOp>& ops,
                                                    const ZkCall& call, int* failed_op);

  // Read-back of an ambiguous write (rules in the class comment): the call's
  // final status, or nullopt when the write did not happen and may be sent
  // again. `failure` is the error that made it ambiguous; `read_call` has
  // what is left of the deadline and is not bound to a session (the new
  // session sees the same data).
  std::optional<absl::Status> ResolveAmbiguousSet(const std::string& path, std::string_view data,
                                                  int rc, const absl::Status& failure,
                                                  const ZkCall& read_call, int& expected,
                                                  ZkStat& stat);
  std::optional<absl::Status> ResolveAmbiguousCreate(const std::string& path, std::string_view data,
                                                     ZkCreateMode mode, int64_t session,
                                                     const absl::Status& failure,
                                                     const ZkCall& read_call, std::string& created);
  std::optional<absl::Status> FindSequentialCreate(const std::string& path, std::string_view data,
                                                   ZkCreateMode mode, int64_t session,
                                                   const absl::Status& failure,
                                                   const ZkCall& read_call, std::string& created);
  std::optional<absl::Status> ResolveAmbiguousDelete(const std::string& path, int version,
                                                     const absl::Status& failure,
                                                     const ZkCall& read_call);
  std::optional<absl::Status> ResolveAmbiguousMulti(const std::vector<ZkOp>& ops, int64_t session,
                                                    const absl::Status& failure,
                                                    const ZkCall& read_call,
                                                    std::vector<ZkOpResult>& results);

  Options options_;
  std::string hosts_;   // connect string without chroot
  std::string chroot_;  // "" or "/x"
  std::chrono::milliseconds op_timeout_;
  std::unique_ptr<ZkSessionMetrics> metrics_;
  std::unique_ptr<ZkWatchRegistry> watches_;

  // Readers (calls sending a request) share it; held exclusively only to
  // replace or close the handle.
  mutable absl::Mutex handle_mu_;
  std::unique_ptr<Handle> handle_ ABSL_GUARDED_BY(handle_mu_);

  mutable absl::Mutex state_mu_;
  mutable absl::CondVar state_cv_;  // signalled on every state change
  ZkSessionState state_ ABSL_GUARDED_BY(state_mu_) = ZkSessionState::kConnecting;
  int64_t session_id_ ABSL_GUARDED_BY(state_mu_) = 0;
  std::string password_ ABSL_GUARDED_BY(state_mu_);
  uint64_t generation_ ABSL_GUARDED_BY(state_mu_) = 0;
  std::chrono::milliseconds negotiated_timeout_ ABSL_GUARDED_BY(state_mu_){0};
  core::Clock::TimePoint suspended_at_ ABSL_GUARDED_BY(state_mu_){};

  absl::Mutex queue_mu_;
  absl::CondVar queue_cv_;
  std::deque<std::function<void()>> queue_ ABSL_GUARDED_BY(queue_mu_);
  bool stopping_ ABSL_GUARDED_BY(queue_mu_) = false;
  std::thread dispatcher_;

  // Not held while a listener runs, so a listener may (un)subscribe; the
  // listener being called is marked instead, and Unsubscribe from another
  // thread waits for that call to end.
  absl::Mutex listeners_mu_;
  absl::CondVar listener_done_cv_;
  std::map<int, Listener> listeners_ ABSL_GUARDED_BY(listeners_mu_);
  int next_listener_ ABSL_GUARDED_BY(listeners_mu_) = 1;
  int running_listener_ ABSL_GUARDED_BY(listeners_mu_) = 0;  // 0: none
  std::thread::id listener_thread_ ABSL_GUARDED_BY(listeners_mu_);

  absl::Mutex close_mu_;  // taken inside handle_mu_ by ReplaceHandle
  bool closed_ ABSL_GUARDED_BY(close_mu_) = false;
};

}  // namespace tempest::coord

#endif  // TEMPEST_COMMON_COORD_ZK_SESSION_H_
