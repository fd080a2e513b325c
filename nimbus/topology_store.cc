#include "nimbus/topology_store.h"

#include <algorithm>
#include <atomic>
#include <random>
#include <utility>

#include "absl/strings/escaping.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/api/config.h"
#include "common/api/string_view_compat.h"
#include "common/coord/chunked_blob.h"
#include "common/coord/topology_identity.h"
#include "common/core/flux/stored_topology.h"
#include "common/core/status_macros.h"
#include "common/core/topology/task_layout.h"
#include "common/core/topology/topology_limits.h"
#include "common/core/topology/topology_resources.h"
#include "common/core/topology/topology_validator.h"
#include "nimbus/rebalance.h"
#include "nlohmann/json.hpp"
#include "spdlog/spdlog.h"

namespace tempest::nimbus {
namespace {

using api::Sv;

// Distinguishes blob keys of submissions with the same name and second.
uint64_t RandomWord() {
  static std::atomic<uint64_t> sequence{0};
  std::random_device rd;
  return (static_cast<uint64_t>(rd()) << 32) ^ rd() ^ ++sequence;
}

// `text` as quoted in a message: escaped (so always valid UTF-8), at most
// 64 bytes of it.
std::string Quoted(std::string_view text) {
  std::string out = absl::CHexEscape(Sv(text.substr(0, 64)));
  if (text.size() > 64) out += "...";
  return out;
}

bool IsTopologyIdShape(std::string_view id) {
  if (id.empty() || id.size() > core::TopologyLimits::kMaxNameLength + 42) return false;
  return std::all_of(id.begin(), id.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           c == '-' || c == '_';
  });
}

}  // namespace

TopologyStore::TopologyStore(coord::ZkSession& session, std::string root,
                             const api::ComponentRegistry& registry, core::Clock& clock)
    : session_(session), paths_(std::move(root)), registry_(registry), clock_(clock) {}

absl::Status TopologyStore::ValidateName(std::string_view name) {
  if (name.empty()) return absl::InvalidArgumentError("the topology has no name");
  return core::CheckTopologyName(name);
}

absl::StatusOr<v1::StormBase> TopologyStore::Prepare(const SubmitRequest& request,
                                                     const api::ComponentRegistry& registry,
                                                     int64_t now_secs,
                                                     const core::FluxOptions* flux,
                                                     coord::ZkAuthConfig* topology_identity) {
  core::TopologySource source;
  source.flux = flux;
  source.flux_text = request.flux_text;
  source.file_name = request.file_name;
  source.name_override = request.name;
  source.config_overrides = &request.config_overrides;
  ASSIGN_OR_RETURN(core::TopologyDef def, core::LoadTopologySource(source));
  const std::string file_name = request.file_name.empty() ? "topology.yaml" : request.file_name;
  if (absl::Status s = ValidateName(def.name); !s.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(file_name, ": ", s.message()));
  }
  RETURN_IF_ERROR(core::CheckOwnerName(request.owner));
  const api::Config& config = def.config;
  absl::StatusOr<coord::ZkAuthConfig> identity = coord::ZkAuthConfig::TopologyFromConfig(config);
  if (!identity.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(file_name, ": ", identity.status().message()));
  }
  if (topology_identity != nullptr) *topology_identity = *std::move(identity);

  RETURN_IF_ERROR(core::TopologyValidator(registry).Check(def).ToStatus());
  RETURN_IF_ERROR(core::ValidateResources(request.resources));
  const int workers = static_cast<int>(config.GetInt(api::kTopologyWorkers, 1));
  if (workers < 1) {
    return absl::InvalidArgumentError(absl::StrCat("topology.workers must be at least 1, not ", workers));
  }
  v1::StormBase base;
  base.set_name(def.name);
  base.set_status(request.inactive ? v1::INACTIVE : v1::ACTIVE);
  base.set_num_workers(workers);
  base.set_launch_time_secs(now_secs);
  base.set_owner(request.owner);
  base.set_message_timeout_secs(
      static_cast<int>(config.GetInt(api::kTopologyMessageTimeoutSecs, 30)));
  RETURN_IF_ERROR(RecomputeLayout(def, base));
  base.set_flux_text(request.flux_text);
  base.set_flux_file_name(file_name);
  for (const auto& [key, value] : request.config_overrides) {
    (*base.mutable_config_overrides())[key] = value;
  }
  // Checked before any write: ZooKeeper refuses a node over its buffer size
  // only after the session has carried the whole request.
  if (base.ByteSizeLong() > kMaxRecordBytes) {
    return absl::InvalidArgumentError(absl::StrCat(
        file_name, ": the topology is too large for ZooKeeper: its record would be ",
        base.ByteSizeLong(), " bytes, over the limit of ", kMaxRecordBytes,
        " bytes of one znode (ZooKeeper's 1 MiB jute.maxbuffer less room for the request)"));
  }
  return base;
}

namespace {

// The resources of a submission that failed: its own error is what the
// caller gets, and a blob left behind only takes space, so a failure to
// remove it is reported rather than returned.
void DropRefusedBlob(coord::ZkSession& session, const std::string& blob_dir) {
  if (blob_dir.empty()) return;
  if (absl::Status s = coord::DeleteChunkedBlob(session, blob_dir); !s.ok()) {
    spdlog::warn("nimbus: cannot remove {} of a refused submission: {}", blob_dir,
                 std::string(s.message()));
  }
}

}  // namespace

absl::StatusOr<std::string> TopologyStore::Submit(const SubmitRequest& request) {
  const int64_t now_secs = clock_.WallMillis() / 1000;
  coord::ZkAuthConfig identity;
  absl::StatusOr<v1::StormBase> base = Prepare(request, registry_, now_secs, nullptr, &identity);
  RETURN_IF_ERROR(base.status());
  ASSIGN_OR_RETURN(std::vector<StoredTopology> existing, List());
  for (const StoredTopology& t : existing) {
    if (t.base.name() == base->name()) {
      return absl::AlreadyExistsError(absl::StrCat("a topology named '", base->name(),
                                                   "' already exists (", t.id, ", ",
                                                   Sv(TopologyStatusName(t.base.status())), ")"));
    }
  }
  // Without ZooKeeper auth every node is open and an identity would protect
  // nothing; with it, the workers get one of their own, the one this name
  // had before (its spouts' offset nodes are that identity's) unless the
  // topology names another.
  const coord::ZkAclPolicy policy = session_.acl_policy();
  std::optional<coord::ZkOp> identity_op;
  if (!policy.authenticated) {
    identity = {};  // never stored where anyone may read it
  } else {
    ASSIGN_OR_RETURN(std::optional<coord::ZkOp> op, IdentityOp(base->name(), identity));
    identity_op = std::move(op);
  }
  const std::string digest = identity.enabled() ? coord::ZkDigestId(identity.payload) : "";
  const coord::ZkAcl readable =
      policy.ForTopology(coord::ZkNodeAccess::kPrivate, digest, coord::kTopologyReadPerms);
  // Resources first, under a key of their own: a record never names a blob
  // that is not complete.
  std::string blob_dir;
  if (request.resources.files_size() > 0) {
    const std::string blob = request.resources.SerializeAsString();
    base->set_resources_key(absl::StrCat(base->name(), "-", now_secs, "-", absl::Hex(RandomWord())));
    blob_dir = paths_.Blob(base->resources_key());
    ASSIGN_OR_RETURN(int chunks, coord::WriteChunkedBlob(session_, blob_dir, blob, readable));
    base->set_resources_chunks(chunks);
    base->set_resources_bytes(static_cast<int64_t>(blob.size()));
  }
  auto drop_blob = [&] { DropRefusedBlob(session_, blob_dir); };
  const std::string data = base->SerializeAsString();
  // Storm's id: {name}-{counter}-{secs}; the counter only separates
  // submissions within one second, so a collision just takes the next one.
  for (int attempt = 0; attempt < 16; ++attempt) {
    const std::string id = absl::StrCat(base->name(), "-", ++counter_, "-", now_secs);
    absl::Status created = CreateTopologyNodes(id, data, identity_op, digest, readable);
    if (created.ok()) return id;
    if (!absl::IsAlreadyExists(created)) {
      drop_blob();
      return created;
    }
  }
  drop_blob();
  return absl::InternalError("could not find a free topology id");
}

absl::StatusOr<std::optional<coord::ZkOp>> TopologyStore::IdentityOp(
    const std::string& name, coord::ZkAuthConfig& identity) {
  const std::string path = paths_.Credential(name);
  absl::StatusOr<coord::ZkNode> stored = session_.Get(path);
  if (!stored.ok() && !absl::IsNotFound(stored.status())) return stored.status();
  if (stored.ok()) {
    absl::StatusOr<coord::ZkAuthConfig> kept = coord::DecodeTopologyIdentity(stored->data);
    if (!identity.enabled()) {
      RETURN_IF_ERROR(kept.status());
      identity = *std::move(kept);
      // Checked in the multi: the identity still is what the workers get.
      return std::optional<coord::ZkOp>(coord::ZkOp::Check(path, stored->stat.version));
    }
    if (kept.ok() && kept->payload == identity.payload) {
      return std::optional<coord::ZkOp>(coord::ZkOp::Check(path, stored->stat.version));
    }
    return std::optional<coord::ZkOp>(
        coord::ZkOp::Set(path, coord::EncodeTopologyIdentity(identity), stored->stat.version));
  }
  if (!identity.enabled()) {
    ASSIGN_OR_RETURN(coord::ZkAuthConfig made, coord::NewTopologyIdentity(name));
    identity = std::move(made);
  }
  return std::optional<coord::ZkOp>(coord::ZkOp::Create(
      path, coord::EncodeTopologyIdentity(identity), coord::ZkCreateMode::kPersistent,
      session_.acl_policy().For(coord::ZkNodeAccess::kPrivate)));
}

absl::Status TopologyStore::CreateTopologyNodes(const std::string& id, const std::string& data,
                                                const std::optional<coord::ZkOp>& identity_op,
                                                const std::string& digest,
                                                const coord::ZkAcl& readable) {
  if (!identity_op.has_value()) {
    coord::ZkCreateOptions create;
    create.create_parents = true;
    absl::StatusOr<std::string> created = session_.Create(paths_.Storm(id), data, create);
    return created.ok() ? absl::OkStatus() : created.status();
  }
  // One multi: a record never exists without its identity, and the
  // directories its workers add beats and errors to exist (with the
  // identity allowed to add children) before any worker starts.
  const coord::ZkAclPolicy policy = session_.acl_policy();
  const coord::ZkAcl dirs =
      policy.ForTopology(coord::ZkNodeAccess::kPrivate, digest, coord::kTopologyWriteDirPerms);
  for (const std::string& parent : {paths_.Storms(), paths_.Credentials(), paths_.WorkerBeats(),
                                    paths_.Errors()}) {
    RETURN_IF_ERROR(session_.EnsurePath(parent));
  }
  std::vector<coord::ZkOp> ops = {
      *identity_op,
      coord::ZkOp::Create(paths_.Storm(id), data, coord::ZkCreateMode::kPersistent, readable),
      coord::ZkOp::Create(paths_.WorkerBeatsOf(id), "", coord::ZkCreateMode::kPersistent, dirs),
      coord::ZkOp::Create(paths_.ErrorsOfTopology(id), "", coord::ZkCreateMode::kPersistent,
                          dirs)};
  // Any node of the id already there (AlreadyExists): the id is taken. A
  // changed identity node (another submit of the name meanwhile) is
  // Aborted: submit again.
  int failed = -1;
  absl::StatusOr<std::vector<coord::ZkOpResult>> done = session_.Multi(ops, {}, &failed);
  if (done.ok()) return absl::OkStatus();
  if (failed == 0 && !absl::IsAlreadyExists(done.status())) {
    return absl::AbortedError(absl::StrCat("the ZooKeeper identity of '", coord::TopologyNameOfId(id),
                                           "' changed during the submit; submit again"));
  }
  return done.status();
}

absl::StatusOr<std::string> TopologyStore::TopologyDigestId(const std::string& id) {
  ASSIGN_OR_RETURN(std::optional<coord::ZkAuthConfig> identity,
                   coord::ReadTopologyIdentity(session_, paths_, coord::TopologyNameOfId(id)));
  return identity.has_value() ? coord::ZkDigestId(identity->payload) : std::string();
}

absl::StatusOr<std::vector<StoredTopology>> TopologyStore::List() {
  absl::StatusOr<std::vector<std::string>> ids = session_.Children(paths_.Storms());
  if (absl::IsNotFound(ids.status())) return std::vector<StoredTopology>{};
  RETURN_IF_ERROR(ids.status());
  std::sort(ids->begin(), ids->end());
  std::vector<StoredTopology> out;
  for (const std::string& id : *ids) {
    absl::StatusOr<StoredTopology> t = Get(id);
    if (absl::IsNotFound(t.status())) continue;  // removed meanwhile
    if (absl::IsDataLoss(t.status())) {
      spdlog::warn("nimbus: skipping {}: {}", id, std::string(t.status().message()));
      continue;
    }
    RETURN_IF_ERROR(t.status());
    out.push_back(*std::move(t));
  }
  return out;
}

absl::StatusOr<StoredTopology> TopologyStore::Get(const std::string& id) {
  // An id is {name}-{counter}-{secs}: anything else cannot name a znode of
  // ours, and is never passed on to ZooKeeper.
  if (!IsTopologyIdShape(id)) {
    return absl::NotFoundError(absl::StrCat("no topology with id '", Quoted(id), "'"));
  }
  absl::StatusOr<coord::ZkNode> node = session_.Get(paths_.Storm(id));
  if (absl::IsNotFound(node.status())) {
    return absl::NotFoundError(absl::StrCat("no topology with id '", id, "'"));
  }
  RETURN_IF_ERROR(node.status());
  StoredTopology t;
  t.id = id;
  t.version = node->stat.version;
  if (!t.base.ParseFromString(node->data)) {
    return absl::DataLossError(absl::StrCat("topology record ", id, " does not parse"));
  }
  return t;
}

absl::StatusOr<StoredTopology> TopologyStore::FindByName(const std::string& name) {
  ASSIGN_OR_RETURN(std::vector<StoredTopology> all, List());
  for (StoredTopology& t : all) {
    if (t.base.name() == name) return std::move(t);
  }
  return absl::NotFoundError(absl::StrCat("no topology named '", Quoted(name), "'"));
}

absl::StatusOr<v1::StormBase> TopologyStore::Transition(const std::string& id, TopologyEvent event,
                                                        std::optional<int> wait_secs) {
  if (wait_secs && *wait_secs < 0) {
    return absl::InvalidArgumentError(absl::StrCat("wait must not be negative, not ", *wait_secs));
  }
  // A lost compare-and-set means someone else changed the record: re-read
  // and decide again.
  for (int attempt = 0; attempt < 5; ++attempt) {
    ASSIGN_OR_RETURN(StoredTopology t, Get(id));
    const v1::TopologyStatus current = t.base.status();
    ASSIGN_OR_RETURN(v1::TopologyStatus next, NextTopologyStatus(current, event));
    v1::StormBase base = t.base;
    if (next == current && event != TopologyEvent::kKill) return base;  // a no-op, as in Storm
    base.set_status(next);
    if (event == TopologyEvent::kKill) {
      if (current != v1::KILLED) base.set_prev_status(current);
      const int wait = wait_secs.value_or(base.message_timeout_secs());
      base.set_kill_wait_secs(wait);
      base.set_remove_at_secs(clock_.WallMillis() / 1000 + wait);
    }
    absl::StatusOr<coord::ZkStat> set =
        session_.Set(paths_.Storm(id), base.SerializeAsString(), t.version);
    if (set.ok()) return base;
    if (absl::IsNotFound(set.status())) {
      return absl::NotFoundError(absl::StrCat("no topology with id '", id, "'"));
    }
    if (!absl::IsAborted(set.status())) return set.status();
  }
  return absl::AbortedError(absl::StrCat("topology ", id, " kept changing; try again"));
}

absl::StatusOr<v1::StormBase> TopologyStore::Rebalance(const std::string& id,
                                                       const RebalanceRequest& request) {
  for (int attempt = 0; attempt < 5; ++attempt) {
    ASSIGN_OR_RETURN(StoredTopology t, Get(id));
    ASSIGN_OR_RETURN(v1::StormBase next,
                     BeginRebalance(t.base, request, clock_.WallMillis() / 1000));
    absl::Status s = Update(id, next, t.version);
    if (s.ok()) return next;
    if (!absl::IsAborted(s)) return s;
  }
  return absl::AbortedError(absl::StrCat("topology ", id, " kept changing; try again"));
}

absl::Status TopologyStore::Update(const std::string& id, const v1::StormBase& base, int version) {
  absl::StatusOr<coord::ZkStat> set =
      session_.Set(paths_.Storm(id), base.SerializeAsString(), version);
  if (set.ok()) return absl::OkStatus();
  if (absl::IsNotFound(set.status())) {
    return absl::NotFoundError(absl::StrCat("no topology with id '", id, "'"));
  }
  return set.status();
}

absl::Status TopologyStore::Remove(const std::string& id) {
  if (absl::Status s = session_.Delete(paths_.Assignment(id));
      !s.ok() && !absl::IsNotFound(s)) {
    return s;
  }
  RETURN_IF_ERROR(RemoveWorkerBeats(id));
  RETURN_IF_ERROR(RemoveErrors(id));
  RETURN_IF_ERROR(RemoveWorkerFailures(id));
  // The resources go before the record that names them.
  if (absl::StatusOr<StoredTopology> t = Get(id); t.ok() && !t->base.resources_key().empty()) {
    if (absl::Status s = coord::DeleteChunkedBlob(
            session_, paths_.Blob(t->base.resources_key()));
        !s.ok()) {
      return s;
    }
  }
  absl::Status s = session_.Delete(paths_.Storm(id));
  return s.ok() || absl::IsNotFound(s) ? absl::OkStatus() : s;
}

namespace {
// Storm's UI shows a component's newest 10 errors.
constexpr size_t kErrorsShownPerComponent = 10;
}  // namespace

absl::StatusOr<std::vector<StoredError>> TopologyStore::ListErrors(const std::string& id) {
  std::vector<StoredError> out;
  absl::StatusOr<std::vector<std::string>> components =
      session_.Children(paths_.ErrorsOfTopology(id));
  if (absl::IsNotFound(components.status())) return out;
  RETURN_IF_ERROR(components.status());
  for (const std::string& component : *components) {
    const std::string dir = paths_.ErrorsOf(id, component);
    absl::StatusOr<std::vector<std::string>> names = session_.Children(dir);
    if (!names.ok()) continue;  // removed meanwhile
    std::sort(names->begin(), names->end());  // zero-padded sequence: age order
    // Workers trim to the newest 10 right after they add new ones; a read
    // in between must not show more.
    const size_t first = names->size() > kErrorsShownPerComponent
                             ? names->size() - kErrorsShownPerComponent
                             : 0;
    for (size_t i = first; i < names->size(); ++i) {
      const std::string& name = (*names)[i];
      absl::StatusOr<coord::ZkNode> node = session_.Get(dir + "/" + name);
      if (!node.ok()) continue;
      // Written by workers, but read as untrusted input all the same.
      nlohmann::json doc = nlohmann::json::parse(node->data, nullptr, /*allow_exceptions=*/false);
      if (!doc.is_object()) continue;
      auto text = doc.find("error");
      auto time = doc.find("time_secs");
      if (text == doc.end() || !text->is_string() || time == doc.end() ||
          !time->is_number_integer()) {
        continue;
      }
      StoredError e;
      e.component = component;
      e.message = text->get<std::string>().substr(0, 4096);
      e.time_secs = time->get<int64_t>();
      if (auto n = doc.find("node"); n != doc.end() && n->is_string()) e.node = n->get<std::string>();
      if (auto p = doc.find("port"); p != doc.end() && p->is_number_integer()) e.port = p->get<int>();
      if (auto t = doc.find("task"); t != doc.end() && t->is_number_integer()) e.task = t->get<int>();
      out.push_back(std::move(e));
    }
  }
  std::stable_sort(out.begin(), out.end(), [](const StoredError& a, const StoredError& b) {
    return a.time_secs < b.time_secs;
  });
  return out;
}

absl::StatusOr<std::vector<std::string>> TopologyStore::ErrorTopologies() {
  absl::StatusOr<std::vector<std::string>> ids = session_.Children(paths_.Errors());
  if (absl::IsNotFound(ids.status())) return std::vector<std::string>();
  return ids;
}

absl::Status TopologyStore::RemoveErrors(const std::string& id) {
  const std::string dir = paths_.ErrorsOfTopology(id);
  // A worker still running may add an error between the steps; the next
  // cleanup round removes what is left.
  absl::StatusOr<std::vector<std::string>> components = session_.Children(dir);
  if (absl::IsNotFound(components.status())) return absl::OkStatus();
  RETURN_IF_ERROR(components.status());
  for (const std::string& component : *components) {
    const std::string cdir = paths_.ErrorsOf(id, component);
    absl::StatusOr<std::vector<std::string>> names = session_.Children(cdir);
    // Each step is best effort: whatever is left makes the Delete of `dir`
    // below fail, and that failure is what is returned.
    if (names.ok()) {
      // Best effort: whatever is left makes the Delete of `dir` below fail.
      for (const std::string& name : *names) (void)session_.Delete(cdir + "/" + name);
    }
    (void)session_.Delete(cdir);  // best effort, as above
  }
  absl::Status s = session_.Delete(dir);
  return s.ok() || absl::IsNotFound(s) ? absl::OkStatus() : s;
}

std::optional<WorkerSlot> ParseBeatName(std::string_view name) {
  const size_t dash = name.rfind('-');
  if (dash == std::string_view::npos || dash == 0) return std::nullopt;
  int port = 0;
  if (!absl::SimpleAtoi(api::Sv(name.substr(dash + 1)), &port) || port < 1 || port > 65535) {
    return std::nullopt;
  }
  return WorkerSlot{std::string(name.substr(0, dash)), port};
}

absl::StatusOr<std::vector<StoredBeat>> TopologyStore::ListWorkerBeats(const std::string& id) {
  const std::string dir = paths_.WorkerBeatsOf(id);
  absl::StatusOr<std::vector<std::string>> names = session_.Children(dir);
  if (absl::IsNotFound(names.status())) return std::vector<StoredBeat>{};
  RETURN_IF_ERROR(names.status());
  std::sort(names->begin(), names->end());
  std::vector<StoredBeat> out;
  for (const std::string& name : *names) {
    absl::StatusOr<coord::ZkNode> node = session_.Get(paths_.WorkerBeat(id, name));
    if (absl::IsNotFound(node.status())) continue;
    RETURN_IF_ERROR(node.status());
    StoredBeat b;
    b.name = name;
    if (std::optional<WorkerSlot> slot = ParseBeatName(name)) b.slot = *slot;
    b.data = std::move(node->data);
    b.parsed = b.beat.ParseFromString(b.data);
    out.push_back(std::move(b));
  }
  return out;
}

absl::StatusOr<std::vector<std::string>> TopologyStore::WorkerBeatTopologies() {
  absl::StatusOr<std::vector<std::string>> ids = session_.Children(paths_.WorkerBeats());
  if (absl::IsNotFound(ids.status())) return std::vector<std::string>{};
  return ids;
}

absl::Status TopologyStore::DeleteWorkerBeat(const std::string& id, const std::string& name) {
  absl::Status s = session_.Delete(paths_.WorkerBeat(id, name));
  return s.ok() || absl::IsNotFound(s) ? absl::OkStatus() : s;
}

absl::Status TopologyStore::RemoveWorkerBeats(const std::string& id) {
  const std::string dir = paths_.WorkerBeatsOf(id);
  // A worker still running may re-create a beat between the two steps;
  // then the directory is not empty and the next round tries again.
  for (int attempt = 0; attempt < 3; ++attempt) {
    absl::StatusOr<std::vector<std::string>> names = session_.Children(dir);
    if (absl::IsNotFound(names.status())) return absl::OkStatus();
    RETURN_IF_ERROR(names.status());
    for (const std::string& name : *names) {
      RETURN_IF_ERROR(DeleteWorkerBeat(id, name));
    }
    absl::Status s = session_.Delete(dir);
    if (s.ok() || absl::IsNotFound(s)) return absl::OkStatus();
    if (s.code() != absl::StatusCode::kFailedPrecondition && !absl::IsAborted(s)) return s;
  }
  return absl::AbortedError(absl::StrCat("workerbeats of ", id, " keep being written"));
}

absl::StatusOr<std::optional<v1::Assignment>> TopologyStore::GetAssignment(const std::string& id) {
  absl::StatusOr<coord::ZkNode> node = session_.Get(paths_.Assignment(id));
  if (absl::IsNotFound(node.status())) return std::optional<v1::Assignment>();
  RETURN_IF_ERROR(node.status());
  v1::Assignment a;
  if (!a.ParseFromString(node->data)) {
    return absl::DataLossError(absl::StrCat("assignment of ", id, " does not parse"));
  }
  return std::optional<v1::Assignment>(std::move(a));
}

absl::Status TopologyStore::PutAssignment(const std::string& id, const v1::Assignment& assignment) {
  const std::string path = paths_.Assignment(id);
  const std::string data = assignment.SerializeAsString();
  absl::StatusOr<coord::ZkStat> set = session_.Set(path, data);
  if (set.ok()) return absl::OkStatus();
  if (!absl::IsNotFound(set.status())) return set.status();
  // The topology's workers read their assignment (and its transport
  // secret) with the topology's identity; no other topology's can.
  ASSIGN_OR_RETURN(std::string digest, TopologyDigestId(id));
  coord::ZkCreateOptions create;
  create.create_parents = true;
  create.acl = session_.acl_policy().ForTopology(coord::ZkNodeAccess::kPrivate, digest,
                                                 coord::kTopologyReadPerms);
  absl::StatusOr<std::string> created = session_.Create(path, data, create);
  return created.ok() ? absl::OkStatus() : created.status();
}

absl::StatusOr<std::vector<v1::SupervisorInfo>> TopologyStore::ListSupervisors() {
  absl::StatusOr<std::vector<std::string>> ids = session_.Children(paths_.Supervisors());
  if (absl::IsNotFound(ids.status())) return std::vector<v1::SupervisorInfo>{};
  RETURN_IF_ERROR(ids.status());
  std::sort(ids->begin(), ids->end());
  std::vector<v1::SupervisorInfo> out;
  for (const std::string& id : *ids) {
    absl::StatusOr<coord::ZkNode> node = session_.Get(paths_.Supervisor(id));
    if (absl::IsNotFound(node.status())) continue;  // gone meanwhile (ephemeral)
    RETURN_IF_ERROR(node.status());
    v1::SupervisorInfo info;
    if (!info.ParseFromString(node->data)) {
      spdlog::warn("nimbus: skipping supervisor {}: its record does not parse", id);
      continue;
    }
    // The node name is the id of record.
    info.set_supervisor_id(id);
    out.push_back(std::move(info));
  }
  return out;
}

}  // namespace tempest::nimbus
