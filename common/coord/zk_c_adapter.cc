#include "common/coord/zk_c_adapter.h"

#include <mutex>
#include <utility>

#include "common/coord/zk_session_metrics.h"
#include "common/coord/zk_status.h"

namespace tempest::coord {

namespace {

using Ctx = std::shared_ptr<ZkSession::Pending>;

std::unique_ptr<Ctx> Take(const void* data) {
  return std::unique_ptr<Ctx>(static_cast<Ctx*>(const_cast<void*>(data)));
}

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

std::optional<ZkWatchEventType> WatchEventTypeOf(int type) {
  if (type == ZOO_CREATED_EVENT) return ZkWatchEventType::kCreated;
  if (type == ZOO_CHANGED_EVENT) return ZkWatchEventType::kChanged;
  if (type == ZOO_DELETED_EVENT) return ZkWatchEventType::kDeleted;
  if (type == ZOO_CHILD_EVENT) return ZkWatchEventType::kChildren;
  return std::nullopt;
}

}  // namespace

CAcl::CAcl(const ZkAcl& source) {
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

void ZkSession::Pending::Finish(int code) {
  absl::MutexLock lock(&mu);
  rc = code;
  done = true;
  cv.SignalAll();
}

void SetZkClientLogStream(std::FILE* stream) { zoo_set_log_stream(stream); }

// --- handles and sessions ---

zhandle_t* ZkCAdapter::Init(const std::string& connect, std::chrono::milliseconds session_timeout,
                            ZkSession::Handle* handle, bool allow_read_only) {
  static std::once_flag log_level_once;
  std::call_once(log_level_once, [] {
    // The C client logs every reconnect at INFO to stderr; keep warnings.
    zoo_set_debug_level(std::getenv("TEMPEST_ZK_DEBUG") != nullptr ? ZOO_LOG_LEVEL_DEBUG
                                                                   : ZOO_LOG_LEVEL_WARN);
  });
  return zookeeper_init(connect.c_str(), &ZkCAdapter::SessionWatcher,
                        static_cast<int>(session_timeout.count()), nullptr, handle,
                        allow_read_only ? ZOO_READONLY : 0);
}

void ZkCAdapter::AddAuth(zhandle_t* zh, const std::string& scheme, const std::string& credential) {
  zoo_add_auth(zh, scheme.c_str(), credential.data(), static_cast<int>(credential.size()),
               &ZkCAdapter::AuthDone, nullptr);
}

ZkClientSession ZkCAdapter::SessionOf(zhandle_t* zh) {
  ZkClientSession out;
  const clientid_t* cid = zoo_client_id(zh);
  if (cid != nullptr) {
    out.id = cid->client_id;
    out.password.assign(cid->passwd, sizeof(cid->passwd));
  }
  out.timeout = std::chrono::milliseconds(zoo_recv_timeout(zh));
  return out;
}

int64_t ZkCAdapter::SessionIdOf(zhandle_t* zh) {
  const clientid_t* cid = zoo_client_id(zh);
  return cid != nullptr ? cid->client_id : 0;
}

void ZkCAdapter::SessionWatcher(zhandle_t*, int type, int state, const char*, void* ctx) {
  if (type != ZOO_SESSION_EVENT) return;
  auto* h = static_cast<ZkSession::Handle*>(ctx);
  ZkSession* s = h->session;
  const uint64_t gen = h->generation;
  s->Enqueue([s, gen, state] { s->OnSessionEvent(gen, state); });
}

void ZkCAdapter::PathWatcher(zhandle_t*, int type, int, const char* path, void* ctx) {
  // Session events also reach path watchers; the handle watcher covers them.
  if (type == ZOO_SESSION_EVENT) return;
  const std::optional<ZkWatchEventType> event_type = WatchEventTypeOf(type);
  if (!event_type.has_value()) return;
  auto* h = static_cast<ZkSession::Handle*>(ctx);
  ZkSession* s = h->session;
  const uint64_t gen = h->generation;
  ZkWatchEvent event{*event_type, path != nullptr ? path : ""};
  s->Enqueue([s, gen, event = std::move(event)] { s->OnWatchEvent(gen, event); });
}

// --- completions ---

void ZkCAdapter::VoidDone(int rc, const void* data) { (*Take(data))->Finish(rc); }

void ZkCAdapter::StatDone(int rc, const Stat* stat, const void* data) {
  auto ctx = Take(data);
  if (stat != nullptr) (*ctx)->stat = FromStat(*stat);
  (*ctx)->Finish(rc);
}

void ZkCAdapter::DataDone(int rc, const char* value, int len, const Stat* stat, const void* data) {
  auto ctx = Take(data);
  if (rc == ZOK) {
    if (value != nullptr && len > 0) (*ctx)->data.assign(value, static_cast<size_t>(len));
    if (stat != nullptr) (*ctx)->stat = FromStat(*stat);
  }
  (*ctx)->Finish(rc);
}

void ZkCAdapter::StringsDone(int rc, const String_vector* strings, const void* data) {
  auto ctx = Take(data);
  if (rc == ZOK && strings != nullptr) {
    for (int i = 0; i < strings->count; ++i) (*ctx)->strings.emplace_back(strings->data[i]);
  }
  (*ctx)->Finish(rc);
}

void ZkCAdapter::StringDone(int rc, const char* value, const void* data) {
  auto ctx = Take(data);
  if (rc == ZOK && value != nullptr) (*ctx)->created = value;
  (*ctx)->Finish(rc);
}

void ZkCAdapter::AclDone(int rc, ACL_vector* acl, Stat* stat, const void* data) {
  auto ctx = Take(data);
  if (rc == ZOK && acl != nullptr) {
    for (int i = 0; i < acl->count; ++i) {
      const ACL& e = acl->data[i];
      (*ctx)->acl.push_back(ZkAclEntry{e.perms, e.id.scheme != nullptr ? e.id.scheme : "",
                                       e.id.id != nullptr ? e.id.id : ""});
    }
    if (stat != nullptr) (*ctx)->stat = FromStat(*stat);
  }
  (*ctx)->Finish(rc);
}

// --- requests ---

int ZkCAdapter::Get(zhandle_t* zh, const std::string& path, ZkSession::Handle* watcher,
                    const void* ctx) {
  if (watcher != nullptr) {
    return zoo_awget(zh, path.c_str(), &ZkCAdapter::PathWatcher, watcher, &ZkCAdapter::DataDone,
                     ctx);
  }
  return zoo_aget(zh, path.c_str(), 0, &ZkCAdapter::DataDone, ctx);
}

int ZkCAdapter::Exists(zhandle_t* zh, const std::string& path, ZkSession::Handle* watcher,
                       const void* ctx) {
  if (watcher != nullptr) {
    return zoo_awexists(zh, path.c_str(), &ZkCAdapter::PathWatcher, watcher, &ZkCAdapter::StatDone,
                        ctx);
  }
  return zoo_aexists(zh, path.c_str(), 0, &ZkCAdapter::StatDone, ctx);
}

int ZkCAdapter::Children(zhandle_t* zh, const std::string& path, ZkSession::Handle* watcher,
                         const void* ctx) {
  if (watcher != nullptr) {
    return zoo_awget_children(zh, path.c_str(), &ZkCAdapter::PathWatcher, watcher,
                              &ZkCAdapter::StringsDone, ctx);
  }
  return zoo_aget_children(zh, path.c_str(), 0, &ZkCAdapter::StringsDone, ctx);
}

int ZkCAdapter::Set(zhandle_t* zh, const std::string& path, std::string_view data, int version,
                    const void* ctx) {
  return zoo_aset(zh, path.c_str(), data.data(), static_cast<int>(data.size()), version,
                  &ZkCAdapter::StatDone, ctx);
}

int ZkCAdapter::Create(zhandle_t* zh, const std::string& path, std::string_view data,
                       const CAcl& acl, ZkCreateMode mode, const void* ctx) {
  return zoo_acreate(zh, path.c_str(), data.data(), static_cast<int>(data.size()), &acl.vector,
                     CreateFlags(mode), &ZkCAdapter::StringDone, ctx);
}

int ZkCAdapter::Delete(zhandle_t* zh, const std::string& path, int version, const void* ctx) {
  return zoo_adelete(zh, path.c_str(), version, &ZkCAdapter::VoidDone, ctx);
}

int ZkCAdapter::GetAcl(zhandle_t* zh, const std::string& path, const void* ctx) {
  return zoo_aget_acl(zh, path.c_str(), &ZkCAdapter::AclDone, ctx);
}

int ZkCAdapter::SetAcl(zhandle_t* zh, const std::string& path, int version, const CAcl& acl,
                       const void* ctx) {
  // The C client takes a non-const vector but only serializes it.
  return zoo_aset_acl(zh, path.c_str(), version, const_cast<ACL_vector*>(&acl.vector),
                      &ZkCAdapter::VoidDone, ctx);
}

void ZkCAdapter::PrepareMulti(const std::vector<ZkOp>& ops, const ZkAclPolicy& policy,
                              ZkSession::Pending& p) {
  const size_t n = ops.size();
  p.op_storage = ops;
  p.ops.resize(n);
  p.results.resize(n);
  p.set_stats.resize(n);
  p.path_bufs.resize(n);
  for (size_t i = 0; i < n; ++i) {
    const ZkOp& op = p.op_storage[i];
    switch (op.kind) {
      case ZkOp::Kind::kCreate: {
        if (!op.acl.has_value()) p.op_storage[i].acl = policy.For(op.access);
        p.acls.push_back(std::make_unique<CAcl>(*p.op_storage[i].acl));
        p.path_bufs[i].resize(op.path.size() + 16);
        zoo_create_op_init(&p.ops[i], op.path.c_str(), op.data.data(),
                           static_cast<int>(op.data.size()), &p.acls.back()->vector,
                           CreateFlags(op.mode), p.path_bufs[i].data(),
                           static_cast<int>(p.path_bufs[i].size()));
        break;
      }
      case ZkOp::Kind::kDelete:
        zoo_delete_op_init(&p.ops[i], op.path.c_str(), op.version);
        break;
      case ZkOp::Kind::kSet:
        zoo_set_op_init(&p.ops[i], op.path.c_str(), op.data.data(),
                        static_cast<int>(op.data.size()), op.version, &p.set_stats[i]);
        break;
      case ZkOp::Kind::kCheck:
        zoo_check_op_init(&p.ops[i], op.path.c_str(), op.version);
        break;
    }
  }
}

int ZkCAdapter::SubmitMulti(zhandle_t* zh, ZkSession::Pending& p, const void* ctx) {
  return zoo_amulti(zh, static_cast<int>(p.ops.size()), p.ops.data(), p.results.data(),
                    &ZkCAdapter::VoidDone, ctx);
}

std::vector<ZkOpResult> ZkCAdapter::MultiResults(const std::vector<ZkOp>& ops, int rc,
                                                 const ZkSession::Pending& p) {
  std::vector<ZkOpResult> results(ops.size());
  for (size_t i = 0; i < ops.size(); ++i) {
    const int err = rc == ZOK ? ZOK : p.results[i].err;
    results[i].status = ZkStatus(err, "multi", ops[i].path);
    if (rc == ZOK && ops[i].kind == ZkOp::Kind::kCreate) {
      results[i].created_path = p.path_bufs[i].data();
    }
    if (rc == ZOK && ops[i].kind == ZkOp::Kind::kSet) results[i].stat = FromStat(p.set_stats[i]);
  }
  return results;
}

int ZkCAdapter::FirstFailedOp(const ZkSession::Pending& p) {
  for (size_t i = 0; i < p.results.size(); ++i) {
    const int err = p.results[i].err;
    if (err != ZOK && err != ZRUNTIMEINCONSISTENCY) return static_cast<int>(i);
  }
  return -1;
}

// --- pipelined set ---

struct ZkCAdapter::AsyncSet {
  ZkSession* session;
  ZkSession::SetCallback done;
  ZkSession::DeadlineClock::time_point start;
  std::string path;
  int rc = 0;
  ZkStat stat;
};

int ZkCAdapter::SetAsync(zhandle_t* zh, ZkSession* session, const std::string& path,
                         std::string_view data, int version, ZkSession::SetCallback done) {
  auto* ctx =
      new AsyncSet{session, std::move(done), ZkSession::DeadlineClock::now(), path, 0, ZkStat{}};
  const int rc = zoo_aset(zh, path.c_str(), data.data(), static_cast<int>(data.size()), version,
                          &ZkCAdapter::AsyncSetDone, ctx);
  if (rc != ZOK) delete ctx;  // the C client calls no completion when submission fails
  return rc;
}

void ZkCAdapter::AsyncSetDone(int rc, const Stat* stat, const void* data) {
  auto* ctx = static_cast<AsyncSet*>(const_cast<void*>(data));
  ctx->rc = rc;
  if (rc == ZOK && stat != nullptr) ctx->stat = FromStat(*stat);
  // Capturing only the pointer keeps the task inside std::function's small
  // buffer: no allocation per completion on the hot path.
  ctx->session->Enqueue([ctx] {
    std::unique_ptr<AsyncSet> owned(ctx);
    absl::Status status = ZkStatus(owned->rc, "set", owned->path);
    owned->session->metrics_->RecordSetAsync(ZkSession::DeadlineClock::now() - owned->start,
                                             status);
    if (status.ok()) {
      owned->done(owned->stat);
    } else {
      owned->done(std::move(status));
    }
  });
}

}  // namespace tempest::coord
