#ifndef TEMPEST_COMMON_COORD_ZK_C_ADAPTER_H_
#define TEMPEST_COMMON_COORD_ZK_C_ADAPTER_H_

// Private to common/coord: ZkSession's side of the ZooKeeper C client. Not
// for use outside the ZkSession implementation files.

#include <zookeeper/zookeeper.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "common/coord/zk_session.h"

namespace tempest::coord {

// The C structures for one ACL list; the strings point into `source`, which
// must outlive it. The C client serializes ACLs when the call is made.
struct CAcl {
  explicit CAcl(const ZkAcl& source);
  std::vector<ACL> entries;
  ACL_vector vector{};
};

struct ZkSession::Handle {
  ZkSession* session = nullptr;
  uint64_t generation = 0;
  zhandle_t* zh = nullptr;
};

// The shared state of one request: the caller waits on it; the C client's
// completion thread fills it. Shared so a caller that gave up at its deadline
// leaves it valid for the late completion. The reply fields below `rc` are
// filled before Finish and read by the caller only once it has seen `done`
// under `mu`, which orders the two.
struct ZkSession::Pending {
  absl::Mutex mu;
  absl::CondVar cv;
  bool done ABSL_GUARDED_BY(mu) = false;
  int rc ABSL_GUARDED_BY(mu) = ZOK;
  ZkStat stat;
  std::string data;
  std::vector<std::string> strings;
  std::string created;
  ZkAcl acl;  // GetAcl
  // Multi: buffers the C client writes into when the reply arrives.
  std::vector<zoo_op_t> ops;
  std::vector<zoo_op_result_t> results;
  std::vector<Stat> set_stats;
  std::vector<std::vector<char>> path_bufs;
  std::vector<ZkOp> op_storage;
  std::vector<std::unique_ptr<CAcl>> acls;

  void Finish(int code);
};

// The id, password and negotiated timeout of a handle's current session.
struct ZkClientSession {
  int64_t id = 0;
  std::string password;
  std::chrono::milliseconds timeout{0};
};

// The only code that passes callbacks to the C client. Its threads only
// enqueue work for the session's dispatcher (or complete a Pending); every
// Submit* returns the C client's code (ZOK: a completion will follow).
// `ctx` is a `new std::shared_ptr<Pending>` that the completion deletes.
struct ZkCAdapter {
  static zhandle_t* Init(const std::string& connect, std::chrono::milliseconds session_timeout,
                         ZkSession::Handle* handle, bool allow_read_only);
  static void AddAuth(zhandle_t* zh, const std::string& scheme, const std::string& credential);
  static ZkClientSession SessionOf(zhandle_t* zh);
  static int64_t SessionIdOf(zhandle_t* zh);

  // `watcher`: the handle whose session gets the watch event; nullptr: no watch.
  static int Get(zhandle_t* zh, const std::string& path, ZkSession::Handle* watcher,
                 const void* ctx);
  static int Exists(zhandle_t* zh, const std::string& path, ZkSession::Handle* watcher,
                    const void* ctx);
  static int Children(zhandle_t* zh, const std::string& path, ZkSession::Handle* watcher,
                      const void* ctx);
  static int Set(zhandle_t* zh, const std::string& path, std::string_view data, int version,
                 const void* ctx);
  static int Create(zhandle_t* zh, const std::string& path, std::string_view data, const CAcl& acl,
                    ZkCreateMode mode, const void* ctx);
  static int Delete(zhandle_t* zh, const std::string& path, int version, const void* ctx);
  static int GetAcl(zhandle_t* zh, const std::string& path, const void* ctx);
  static int SetAcl(zhandle_t* zh, const std::string& path, int version, const CAcl& acl,
                    const void* ctx);
  // Fills `p`'s multi buffers from `ops` (creates without an ACL of their
  // own get `policy`'s); then SubmitMulti sends them.
  static void PrepareMulti(const std::vector<ZkOp>& ops, const ZkAclPolicy& policy,
                           ZkSession::Pending& p);
  static int SubmitMulti(zhandle_t* zh, ZkSession::Pending& p, const void* ctx);
  // The per-op results of a completed multi (statuses, created paths, set stats).
  static std::vector<ZkOpResult> MultiResults(const std::vector<ZkOp>& ops, int rc,
                                              const ZkSession::Pending& p);
  // The first op of a failed multi that the server rejected (not merely
  // left unevaluated), or -1.
  static int FirstFailedOp(const ZkSession::Pending& p);
  static int SetAsync(zhandle_t* zh, ZkSession* session, const std::string& path,
                      std::string_view data, int version, ZkSession::SetCallback done);

 private:
  struct AsyncSet;
  static void SessionWatcher(zhandle_t*, int type, int state, const char*, void* ctx);
  static void PathWatcher(zhandle_t*, int type, int, const char* path, void* ctx);
  static void VoidDone(int rc, const void* data);
  static void StatDone(int rc, const Stat* stat, const void* data);
  static void DataDone(int rc, const char* value, int len, const Stat* stat, const void* data);
  static void StringsDone(int rc, const String_vector* strings, const void* data);
  static void StringDone(int rc, const char* value, const void* data);
  static void AclDone(int rc, ACL_vector* acl, Stat* stat, const void* data);
  static void AuthDone(int, const void*) {}
  static void AsyncSetDone(int rc, const Stat* stat, const void* data);
};

}  // namespace tempest::coord

#endif  // TEMPEST_COMMON_COORD_ZK_C_ADAPTER_H_
