#include "spout/kafka/offsets/zk_offset_store.h"

#include <algorithm>
#include <set>

#include "absl/strings/str_cat.h"
#include "common/coord/versioned_cas.h"
#include "common/coord/zk_acl_check.h"
#include "common/coord/zk_paths.h"
#include "common/core/status_macros.h"
#include "common/os/limits.h"
#include "spdlog/spdlog.h"

namespace tempest::spout {
namespace {

using SteadyClock = std::chrono::steady_clock;

int64_t WallMillis() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::string ParentOf(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == 0 || slash == std::string::npos ? "/" : path.substr(0, slash);
}

}  // namespace

absl::StatusOr<std::unique_ptr<ZkOffsetStore>> ZkOffsetStore::Create(Options options) {
  if (options.connect_string.empty()) {
    return absl::InvalidArgumentError("offset store: empty ZooKeeper connect string");
  }
  auto store = std::unique_ptr<ZkOffsetStore>(new ZkOffsetStore(std::move(options)));
  coord::ZkSession::Options zo;
  zo.connect_string = store->options_.connect_string;
  zo.create_chroot = false;
  zo.config = store->options_.zk_config;
  zo.operation_timeout = store->options_.op_timeout;
  zo.metrics = *store->metrics_;
  ASSIGN_OR_RETURN(store->session_, coord::ZkSession::Create(zo));
  RETURN_IF_ERROR(store->CheckCredentials());
  RETURN_IF_ERROR(store->CheckChroot());
  ZkOffsetStore* self = store.get();
  // Runs on the session's dispatcher: only flags (which wakes the store
  // thread's wait on the mailbox).
  store->subscription_ = store->session_->Subscribe([self](const coord::ZkSessionEvent&) {
    absl::MutexLock lock(&self->mu_);
    self->session_event_ = true;
  });
  RETURN_IF_ERROR(
      os::StartThread(store->thread_, "the ZooKeeper offset store", [self] { self->Loop(); }));
  return store;
}

absl::Status ZkOffsetStore::CheckCredentials() {
  // With credentials, a spout whose identity may not read its own offsets
  // fails at open instead of running without commits. (Without them, or
  // with ZooKeeper unreachable for now, the store's own retries apply.)
  if (!options_.zk_config.auth.enabled()) return absl::OkStatus();
  const auto wait =
      std::min(options_.zk_config.connection_timeout, std::chrono::milliseconds(10000));
  if (absl::Status s = session_->WaitConnected(wait); absl::IsPermissionDenied(s)) return s;
  if (!session_->IsConnected()) return absl::OkStatus();
  // The spout's directory, {zkRoot}/{id}: the parent of its offset nodes
  // (topic-level layouts have one more level).
  std::string dir = ParentOf(OffsetNodePath(options_.zk_root, options_.spout_id, "t", 0, false));
  absl::Status s = session_->VerifyAccess(dir, coord::ZkCall{options_.op_timeout});
  return absl::IsPermissionDenied(s) ? s : absl::OkStatus();
}

absl::Status ZkOffsetStore::CheckChroot() {
  std::string hosts, chroot;
  if (!coord::SplitConnectString(options_.connect_string, &hosts, &chroot).ok() || chroot.empty()) {
    return absl::OkStatus();
  }
  // Like CheckCredentials: a ZooKeeper that cannot be reached now is left to
  // the store's retries; one that answers and lacks the chroot is a
  // configuration error. The store never creates a chroot: a mistyped one
  // would otherwise hold a fresh, empty offset tree and the spout would
  // start from startOffsetTime as if it had never committed.
  const auto wait =
      std::min(options_.zk_config.connection_timeout, std::chrono::milliseconds(10000));
  // Its status is not the answer: whether the session is connected now is.
  (void)session_->WaitConnected(wait);
  if (!session_->IsConnected()) return absl::OkStatus();
  absl::StatusOr<std::optional<coord::ZkStat>> root =
      session_->Exists("/", coord::ZkCall{options_.op_timeout});
  if (!root.ok() || root->has_value()) return absl::OkStatus();
  return absl::FailedPreconditionError(
      absl::StrCat("kafka spout ", options_.spout_id, ": the ZooKeeper chroot ", chroot,
                   " of zkServers (", options_.connect_string,
                   ") does not exist; create it or correct zkServers (offsets are "
                   "never read from or written to another path)"));
}

void ZkOffsetStore::EndDeniedEpisode() {
  if (denied_in_episode_ == 0) return;
  spdlog::info(
      "kafka spout {}: ZooKeeper admits offset commits again after {} refused; the "
      "commit stored everything acked meanwhile",
      options_.spout_id, denied_in_episode_);
  denied_in_episode_ = 0;
  denied_log_.Reset();
}

void ZkOffsetStore::ReportCommitDenied(const CommitBatch& batch, int failed_op,
                                       const absl::Status& st) {
  // An ACL that shuts us out (NOAUTH): nothing was written and nothing is
  // advanced; the commit is retried every round until the ACL allows it.
  // One line when the refusals start, not one per round.
  commit_denied_->Add(1);
  ++denied_in_episode_;
  if (!denied_log_.Allow()) return;
  const std::string path = failed_op >= 0 && failed_op < static_cast<int>(batch.ops.size())
                               ? batch.ops[failed_op].path
                               : batch.ops.front().path;
  spdlog::error(
      "kafka spout {}: ZooKeeper denies writing {} (NOAUTH: its ACL does not admit this "
      "spout's credentials); commits are paused, nothing is skipped, retrying: {}",
      options_.spout_id, path, std::string(st.message()));
}

ZkOffsetStore::ZkOffsetStore(Options options) : options_(std::move(options)) {
  metrics_ = options_.metrics != nullptr ? options_.metrics : &core::MetricsRegistry::Global();
  commit_latency_us_ =
      &metrics_->GetHistogram("tempest_kafka_spout_commit_latency_us", options_.labels);
  commit_failures_ = &metrics_->GetCounter("tempest_kafka_spout_commit_failures", options_.labels);
  commit_denied_ = &metrics_->GetCounter("tempest_kafka_spout_commit_denied", options_.labels);
  commits_ = &metrics_->GetCounter("tempest_kafka_spout_zk_multis", options_.labels);
  coalesced_ = &metrics_->GetCounter("tempest_kafka_spout_commits_coalesced", options_.labels);
  pending_ = &metrics_->GetGauge("tempest_kafka_spout_commit_partitions_pending", options_.labels);
  in_flight_ = &metrics_->GetGauge("tempest_kafka_spout_commit_multis_in_flight", options_.labels);
}

ZkOffsetStore::~ZkOffsetStore() { Close(std::chrono::milliseconds(0)); }

void ZkOffsetStore::SetAssignment(std::vector<TopicPartition> partitions) {
  std::sort(partitions.begin(), partitions.end());
  absl::MutexLock lock(&mu_);
  desired_ = std::move(partitions);
  desired_changed_ = true;
}

void ZkOffsetStore::RequestCommit(std::vector<OffsetCommit> commits) {
  absl::MutexLock lock(&mu_);
  for (OffsetCommit& c : commits) {
    auto it = requested_.find(c.partition);
    // Not sent yet: the newer request replaces it (one multi carries the
    // latest offset), so a slow ZooKeeper never builds a queue.
    if (it != requested_.end()) coalesced_->Add(1);
    if (it != requested_.end() && !it->second.journal.empty()) {
      // The replaced request's entries go first: they happened first.
      c.journal.insert(c.journal.begin(), std::make_move_iterator(it->second.journal.begin()),
                       std::make_move_iterator(it->second.journal.end()));
    }
    requested_[c.partition] = std::move(c);
  }
  pending_->Set(static_cast<int64_t>(requested_.size()));
}

std::vector<OffsetStoreUpdate> ZkOffsetStore::TakeUpdates() {
  absl::MutexLock lock(&mu_);
  std::vector<OffsetStoreUpdate> out;
  out.swap(updates_);
  has_updates_.store(false, std::memory_order_relaxed);
  return out;
}

bool ZkOffsetStore::HasUpdates() const {
  // No lock: the executor asks on every NextTuple.
  return has_updates_.load(std::memory_order_acquire);
}

int64_t ZkOffsetStore::multi_count() const { return multis_.load(); }

void ZkOffsetStore::Close(std::chrono::milliseconds timeout) {
  {
    absl::MutexLock lock(&mu_);
    if (closed_) return;
    closed_ = true;
    closing_ = true;
    close_deadline_ = SteadyClock::now() + timeout;
  }
  if (thread_.joinable()) thread_.join();
  if (session_) {
    session_->Unsubscribe(subscription_);
    session_->Close();
  }
}

void ZkOffsetStore::Post(OffsetStoreUpdate update) {
  absl::MutexLock lock(&mu_);
  updates_.push_back(std::move(update));
  has_updates_.store(true, std::memory_order_release);
}

std::string ZkOffsetStore::OffsetPath(const TopicPartition& tp) const {
  return OffsetNodePath(options_.zk_root, options_.spout_id, tp.topic, tp.partition,
                        options_.topic_level);
}

std::string ZkOffsetStore::OwnerPath(const TopicPartition& tp) const {
  return OwnerNodePath(options_.zk_root, options_.spout_id, tp.topic, tp.partition,
                       options_.topic_level);
}

std::string ZkOffsetStore::JournalDir(const TopicPartition& tp) const {
  return JournalDirPath(options_.zk_root, options_.spout_id, tp.topic, tp.partition,
                        options_.topic_level);
}

void ZkOffsetStore::MarkLost(const TopicPartition& tp, absl::Status why) {
  owned_.erase(tp);
  OffsetStoreUpdate u;
  u.kind = OffsetStoreUpdate::Kind::kLost;
  u.partition = tp;
  u.status = std::move(why);
  Post(std::move(u));
}

void ZkOffsetStore::Loop() {
  for (;;) {
    Mail mail = TakeMail();
    HandleSession();
    if (!mail.requested.empty()) {
      if (mail.closing) {
        FinalCommit(std::move(mail.requested), mail.close_deadline);
      } else {
        CommitRound(std::move(mail.requested), options_.op_timeout);
      }
    }
    if (mail.desired.has_value()) ApplyAssignment(std::move(*mail.desired));
    if (mail.closing) {
      ReleaseAll(mail.close_deadline);
      return;
    }
    if (session_->state() == coord::ZkSessionState::kConnected) AcquireDue();
  }
}

bool ZkOffsetStore::HasMail() const {
  return desired_changed_ || !requested_.empty() || session_event_ || closing_;
}

ZkOffsetStore::Mail ZkOffsetStore::TakeMail() {
  Mail mail;
  absl::MutexLock lock(&mu_);
  mu_.AwaitWithTimeout(absl::Condition(this, &ZkOffsetStore::HasMail), absl::Milliseconds(100));
  if (desired_changed_) {
    mail.desired = desired_;
    desired_changed_ = false;
  }
  mail.requested.swap(requested_);
  pending_->Set(0);
  session_event_ = false;
  mail.closing = closing_;
  mail.close_deadline = close_deadline_;
  return mail;
}

void ZkOffsetStore::FinalCommit(std::map<TopicPartition, OffsetCommit> commits,
                                SteadyClock::time_point deadline) {
  const auto left =
      std::chrono::duration_cast<std::chrono::milliseconds>(deadline - SteadyClock::now());
  if (left.count() <= 0) return;
  CommitRound(std::move(commits), std::min(options_.op_timeout, left));
}

void ZkOffsetStore::ApplyAssignment(std::vector<TopicPartition> desired) {
  assignment_ = std::move(desired);
  std::vector<TopicPartition> gone;
  for (const auto& [tp, owned] : owned_) {
    if (!std::binary_search(assignment_.begin(), assignment_.end(), tp)) gone.push_back(tp);
  }
  for (const TopicPartition& tp : gone) Release(tp);
  for (auto it = next_attempt_.begin(); it != next_attempt_.end();) {
    it = std::binary_search(assignment_.begin(), assignment_.end(), it->first)
             ? std::next(it)
             : next_attempt_.erase(it);
  }
}

void ZkOffsetStore::ReleaseAll(SteadyClock::time_point deadline) {
  std::vector<TopicPartition> all;
  for (const auto& [tp, owned] : owned_) all.push_back(tp);
  if (SteadyClock::now() < deadline) {
    for (const TopicPartition& tp : all) Release(tp);
  }
}

void ZkOffsetStore::AcquireDue() {
  const auto now = SteadyClock::now();
  TrimJournals();
  for (const TopicPartition& tp : assignment_) {
    if (owned_.contains(tp)) continue;
    auto next = next_attempt_.find(tp);
    if (next != next_attempt_.end() && now < next->second) continue;
    TryAcquire(tp);
    // A mailbox change (e.g. Close) should not wait for a long sweep.
    absl::MutexLock lock(&mu_);
    if (closing_ || desired_changed_) break;
  }
}

void ZkOffsetStore::HandleSession() {
  const coord::ZkSessionState state = session_->state();
  const int64_t sid = session_->session_id();
  const bool usable = state == coord::ZkSessionState::kConnected ||
                      state == coord::ZkSessionState::kSuspended ||
                      state == coord::ZkSessionState::kReadOnly;
  if (sid != ensured_session_) {
    ensured_.clear();  // a new session may face a changed tree (e.g. a deleted root)
    owned_dirs_.clear();
    ensured_session_ = sid;
  }
  std::vector<TopicPartition> lost;
  for (const auto& [tp, owned] : owned_) {
    // Suspended keeps ownership: the session may come back, and writes
    // cannot be sent meanwhile anyway. Lost (server expiry or our own timer)
    // or a different session means the owner node is not ours any more.
    if (!usable || owned.session_id != sid) lost.push_back(tp);
  }
  for (const TopicPartition& tp : lost) {
    spdlog::warn("kafka spout {}: ownership of {} lost (ZooKeeper session {})", options_.spout_id,
                 Describe(tp), std::string(coord::ZkSessionStateName(state)));
    MarkLost(tp, absl::UnavailableError(absl::StrCat(
                     "ZooKeeper session ", std::string(coord::ZkSessionStateName(state)))));
  }
}

void ZkOffsetStore::TryAcquire(const TopicPartition& tp) {
  const int64_t sid = session_->session_id();
  const coord::ZkCall call{options_.op_timeout, sid};
  next_attempt_[tp] = SteadyClock::now() + options_.retry_interval;
  if (!EnsureParents(tp, call)) return;
  Owned o;
  o.session_id = sid;
  if (!ClaimOwnerNode(tp, call, o)) return;
  std::optional<StormKafkaOffset> stored;
  if (!ReadStoredOffset(tp, call, o, stored)) return;
  o.acquisition = next_acquisition_++;
  owned_[tp] = o;
  next_attempt_.erase(tp);
  Unblock(tp);
  OffsetStoreUpdate u;
  u.kind = OffsetStoreUpdate::Kind::kAcquired;
  u.partition = tp;
  u.acquisition = o.acquisition;
  u.stored = std::move(stored);
  u.session_id = sid;
  u.owner_czxid = o.owner_czxid;
  Post(std::move(u));
}

bool ZkOffsetStore::EnsureParents(const TopicPartition& tp, const coord::ZkCall& call) {
  // Parents are made once per session generation; after that an acquisition
  // costs two round trips (create owner, read offset).
  const std::string owner_parent = ParentOf(OwnerPath(tp));
  const std::string offset_parent = ParentOf(OffsetPath(tp));
  const std::string journal = options_.journal ? JournalDir(tp) : offset_parent;
  if (ensured_.contains(owner_parent) && ensured_.contains(offset_parent) &&
      ensured_.contains(journal)) {
    return true;
  }
  // Offsets (and their parents) first: legacy monitoring tools may read
  // them (tempest.zookeeper.offsets.world.readable); owner nodes are private.
  // Each chain is checked before anything is created in it (a node another
  // client made is refused or repaired first) and once more after, for the
  // levels just made.
  // zkRoot first, as a level other topologies' spouts may create in too
  // (kSharedParent): a topology identity that made it alone would lock every
  // later topology out of the default /kafkaspout.
  const std::string root = ZkRootDir();
  if (root != "/" && !ensured_.contains(root)) {
    if (!CheckChain(tp, root, offset_parent, call)) return false;
    absl::Status made = session_->EnsurePath(root, call, coord::ZkNodeAccess::kSharedParent);
    if (!made.ok() || !CheckChain(tp, root, offset_parent, call)) return false;
    ensured_.insert(root);
  }
  const std::pair<std::string, coord::ZkNodeAccess> dirs[] = {
      {offset_parent, coord::ZkNodeAccess::kLegacyReadable},
      {owner_parent, coord::ZkNodeAccess::kPrivate},
      {journal, coord::ZkNodeAccess::kPrivate}};
  for (const auto& [dir, access] : dirs) {
    if (!CheckChain(tp, dir, offset_parent, call)) return false;
    absl::Status made = dir == journal && options_.journal
                            ? EnsureJournalDir(*session_, dir, call)
                            : session_->EnsurePath(dir, call, access);
    if (!made.ok() || !CheckChain(tp, dir, offset_parent, call)) return false;
  }
  ensured_.insert(owner_parent);
  ensured_.insert(offset_parent);
  ensured_.insert(journal);
  return true;
}

bool ZkOffsetStore::CheckChain(const TopicPartition& tp, const std::string& dir,
                               const std::string& offset_parent, const coord::ZkCall& call) {
  absl::Status s = EnsureOwnedChain(dir, offset_parent, call);
  if (s.ok()) return true;
  if (absl::IsFailedPrecondition(s)) Block(tp, std::move(s));  // otherwise retried quietly
  return false;
}

bool ZkOffsetStore::ClaimOwnerNode(const TopicPartition& tp, const coord::ZkCall& call, Owned& o) {
  const std::string owner = OwnerPath(tp);
  coord::ZkCreateOptions create;
  create.mode = coord::ZkCreateMode::kEphemeral;
  create.create_parents = true;
  const std::string record = absl::StrCat("{\"session\":\"", absl::Hex(o.session_id),
                                          "\",\"owner\":\"", options_.owner_description, "\"}");
  absl::Status created;
  if (options_.journal) {
    // The acquisition entry rides in the owner node's create: one round trip
    // as before, and no entry unless the claim succeeded.
    JournalEntry e;
    e.type = JournalEntryType::kAcquired;
    e.time_ms = WallMillis();
    e.owner = options_.owner_description;
    e.session = absl::StrCat(absl::Hex(o.session_id));
    e.topology = options_.topology_id;
    std::vector<coord::ZkOp> ops{coord::ZkOp::Create(owner, record, coord::ZkCreateMode::kEphemeral),
                                 JournalAppendOp(JournalDir(tp), e)};
    int failed_op = -1;
    created = session_->Multi(ops, call, &failed_op).status();
    if (absl::IsNotFound(created) && failed_op == 1) ensured_.erase(JournalDir(tp));
  } else {
    created = session_->Create(owner, record, create, call).status();
  }
  // (A create that succeeded was made on our session, bound by the call:
  // ours, at version 0.)
  o.owner_version = 0;
  o.owner_czxid = 0;
  if (created.ok()) return true;
  if (!absl::IsAlreadyExists(created)) return false;
  // ephemeralOwner decides who holds an existing node (KAFKA-1387: a node
  // of our own session may survive a quick reconnect).
  absl::StatusOr<coord::ZkNode> node = session_->Get(owner, call);
  if (absl::IsPermissionDenied(node.status())) {
    Block(tp, absl::FailedPreconditionError(absl::StrCat(
                  "ZooKeeper ownership node ", owner,
                  " cannot be read with this spout's credentials (another identity made it); "
                  "refusing to wait for it: remove it")));
    return false;
  }
  if (!node.ok()) return false;
  if (node->stat.ephemeral_owner != o.session_id) {
    if (!OwnerNodeIsGenuine(tp, owner, *node, call)) return false;
    spdlog::debug("kafka spout {}: {} is owned by session {:x}; waiting", options_.spout_id,
                  Describe(tp), node->stat.ephemeral_owner);
    return false;
  }
  o.owner_version = node->stat.version;
  o.owner_czxid = node->stat.czxid;
  return true;
}

bool ZkOffsetStore::OwnerNodeIsGenuine(const TopicPartition& tp, const std::string& owner,
                                       const coord::ZkNode& node, const coord::ZkCall& call) {
  const bool authenticated = session_->acl_policy().authenticated;
  if (node.stat.ephemeral_owner != 0 && !authenticated) return true;
  absl::StatusOr<std::pair<coord::ZkAcl, coord::ZkStat>> acl = session_->GetAcl(owner, call);
  if (!acl.ok()) return false;
  if (node.stat.ephemeral_owner == 0) {
    // No session holds it, so it never goes away by itself: waiting for it
    // would be a silent stall.
    Block(tp, absl::FailedPreconditionError(absl::StrCat(
                  "ZooKeeper ownership node ", owner,
                  " is persistent, not a spout's ephemeral owner node (its ACL: ",
                  coord::DescribeAcl(acl->first), "); refusing to wait for it: remove it")));
    return false;
  }
  if (absl::Status s = coord::CheckNotForeign(*session_, owner, acl->first,
                                              coord::ZkNodeAccess::kPrivate, "ownership node");
      !s.ok()) {
    Block(tp, std::move(s));
    return false;
  }
  Unblock(tp);  // a real owner: contention, not an error
  return true;
}

std::string ZkOffsetStore::ZkRootDir() const {
  return ParentOf(ParentOf(OffsetNodePath(options_.zk_root, options_.spout_id, "t", 0, false)));
}

absl::Status ZkOffsetStore::EnsureOwnedChain(const std::string& dir,
                                             const std::string& offset_parent,
                                             const coord::ZkCall& call) {
  if (!session_->acl_policy().authenticated) return absl::OkStatus();
  // zkRoot itself and every level below it down to `dir`. Ancestors above
  // zkRoot are not the spout's (often `/`): the most they allow is removing
  // zkRoot while it is empty, and whatever replaces it is checked here again.
  const std::string root = ZkRootDir();
  std::vector<std::string> chain;
  for (std::string p = dir; p != "/" && p.size() >= root.size(); p = ParentOf(p)) {
    chain.push_back(p);
    if (p == root) break;
  }
  for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
    if (owned_dirs_.contains(*it)) continue;
    // The levels offset nodes hang from are legacy-readable (EnsureParents).
    const bool legacy = offset_parent == *it || offset_parent.starts_with(*it + "/");
    // zkRoot is shared with other topologies' spouts: reading it and making
    // this spout's own level in it is all a spout needs there.
    const bool shared = *it == root;
    const coord::ZkNodeAccess access = shared   ? coord::ZkNodeAccess::kSharedParent
                                       : legacy ? coord::ZkNodeAccess::kLegacyReadable
                                                : coord::ZkNodeAccess::kPrivate;
    const int needed = coord::kZkPermRead | coord::kZkPermCreate |
                       (shared ? 0 : coord::kZkPermDelete);
    absl::StatusOr<coord::ZkOwnershipResult> r =
        coord::EnsureOwnedNode(*session_, *it, access, needed, call);
    // Absent: so is everything below it; whatever creates them gives them
    // the policy's ACL.
    if (absl::IsNotFound(r.status())) break;
    RETURN_IF_ERROR(r.status());
    if (r->outcome == coord::ZkOwnership::kRepaired) {
      spdlog::warn("kafka spout {}: {}", options_.spout_id, r->detail);
    }
    owned_dirs_.insert(*it);
  }
  return absl::OkStatus();
}

void ZkOffsetStore::Block(const TopicPartition& tp, absl::Status why) {
  auto [it, fresh] = blocked_.try_emplace(tp, options_.retry_interval);
  if (!fresh) it->second = std::min(it->second * 2, std::chrono::milliseconds(30000));
  core::MetricLabels l = options_.labels;
  l["topic"] = tp.topic;
  l["partition"] = absl::StrCat(tp.partition);
  metrics_->GetGauge("tempest_kafka_spout_partition_blocked", l).Set(1);
  next_attempt_[tp] = SteadyClock::now() + it->second;
  OffsetStoreUpdate u;
  u.kind = OffsetStoreUpdate::Kind::kReadFailed;
  u.partition = tp;
  u.status = std::move(why);
  Post(std::move(u));
}

void ZkOffsetStore::Unblock(const TopicPartition& tp) {
  if (blocked_.erase(tp) == 0) return;
  core::MetricLabels l = options_.labels;
  l["topic"] = tp.topic;
  l["partition"] = absl::StrCat(tp.partition);
  metrics_->GetGauge("tempest_kafka_spout_partition_blocked", l).Set(0);
  spdlog::info("kafka spout {}: {} is no longer blocked by a foreign ZooKeeper node",
               options_.spout_id, Describe(tp));
}

bool ZkOffsetStore::ReadStoredOffset(const TopicPartition& tp, const coord::ZkCall& call, Owned& o,
                                     std::optional<StormKafkaOffset>& stored) {
  const std::string path = OffsetPath(tp);
  absl::StatusOr<coord::ZkNode> offset = session_->Get(path, call);
  if (absl::IsNotFound(offset.status())) return true;  // no node yet: the first commit creates it
  OffsetStoreUpdate u;
  u.kind = OffsetStoreUpdate::Kind::kReadFailed;
  u.partition = tp;
  if (!offset.ok()) {
    u.status = offset.status();
    Post(std::move(u));
    return false;
  }
  if (session_->acl_policy().authenticated) {
    // A node another client planted (e.g. under a parent it made first) must
    // not decide where the spout resumes.
    absl::StatusOr<std::pair<coord::ZkAcl, coord::ZkStat>> acl = session_->GetAcl(path, call);
    if (!acl.ok()) return false;
    if (absl::Status s = coord::CheckNotForeign(
            *session_, path, acl->first, coord::ZkNodeAccess::kLegacyReadable, "offset node");
        !s.ok()) {
      Block(tp, std::move(s));
      return false;
    }
  }
  absl::StatusOr<StormKafkaOffset> decoded = DecodeStormKafkaOffset(offset->data);
  if (!decoded.ok()) {
    // Refuse to guess a position: keep the owner node (nobody else guesses
    // either), report, and re-read until an operator fixes the node.
    u.status = absl::DataLossError(
        absl::StrCat("malformed offset node ", path, ": ", decoded.status().message()));
    Post(std::move(u));
    next_attempt_[tp] =
        SteadyClock::now() + std::max(options_.retry_interval, std::chrono::milliseconds(2000));
    return false;
  }
  stored = *decoded;
  o.offset_version = offset->stat.version;
  o.stored_offset = decoded->offset;
  return true;
}

void ZkOffsetStore::Release(const TopicPartition& tp) {
  auto it = owned_.find(tp);
  if (it == owned_.end()) return;
  const Owned o = it->second;
  if (session_->session_id() == o.session_id) {
    // Version-checked and session-bound: never deletes a successor's node.
    (void)session_->Delete(OwnerPath(tp), o.owner_version,
                           coord::ZkCall{options_.op_timeout, o.session_id});
  }
  MarkLost(tp, absl::CancelledError("released (partition reassigned)"));
}

void ZkOffsetStore::CommitRound(std::map<TopicPartition, OffsetCommit> commits,
                                std::chrono::milliseconds call_timeout) {
  // Bounded: each failing round removes at least one partition.
  for (int round = 0; round < 64 && !commits.empty(); ++round) {
    CommitBatch batch = BuildCommitBatch(commits);
    if (batch.ops.empty()) return;
    const auto start = SteadyClock::now();
    int failed_op = -1;
    in_flight_->Set(1);
    absl::StatusOr<std::vector<coord::ZkOpResult>> result = session_->Multi(
        batch.ops, coord::ZkCall{call_timeout, batch.session_id}, &failed_op);
    in_flight_->Set(0);
    multis_.fetch_add(1);
    commits_->Add(1);
    commit_latency_us_->Record(
        std::chrono::duration_cast<std::chrono::microseconds>(SteadyClock::now() - start).count());
    if (result.ok()) {
      EndDeniedEpisode();
      OnCommitApplied(batch.sent);
      return;
    }
    const absl::Status& st = result.status();
    if (absl::IsFailedPrecondition(st)) {
      // Fenced: the session that owned these partitions is gone.
      commit_failures_->Add(1);
      for (const OffsetCommit& c : batch.sent) MarkLost(c.partition, st);
      return;
    }
    if ((absl::IsAborted(st) || absl::IsNotFound(st) || absl::IsAlreadyExists(st)) &&
        failed_op >= 0 && failed_op < static_cast<int>(batch.op_partition.size())) {
      // Someone else changed this partition's owner or offset node: we are
      // not its owner any more (or never were); re-acquire and re-read.
      const TopicPartition bad = batch.op_partition[failed_op];
      // A journal directory removed under us is made again at re-acquisition.
      if (batch.op_journal[failed_op]) ensured_.erase(JournalDir(bad));
      commit_failures_->Add(1);
      spdlog::warn("kafka spout {}: commit of {} rejected ({}); re-acquiring", options_.spout_id,
                   Describe(bad), std::string(st.message()));
      MarkLost(bad, st);
      commits.erase(bad);
      continue;  // the others were not applied: send them again
    }
    commit_failures_->Add(1);
    for (const OffsetCommit& c : batch.sent) {
      // Not applied (or not known to be): keep the entries for the next try.
      auto owned = owned_.find(c.partition);
      if (owned != owned_.end()) owned->second.unsent_journal = c.journal;
    }
    if (absl::IsPermissionDenied(st)) ReportCommitDenied(batch, failed_op, st);
    OffsetStoreUpdate u;
    u.kind = OffsetStoreUpdate::Kind::kCommitFailed;
    u.status = st;
    Post(std::move(u));
    return;
  }
}

ZkOffsetStore::CommitBatch ZkOffsetStore::BuildCommitBatch(
    std::map<TopicPartition, OffsetCommit>& commits) {
  CommitBatch batch;
  for (auto it = commits.begin(); it != commits.end();) {
    const TopicPartition tp = it->first;
    const OffsetCommit& c = it->second;
    auto owned = owned_.find(tp);
    if (owned == owned_.end() || owned->second.acquisition != c.acquisition) {
      it = commits.erase(it);  // stale epoch: its spout state is gone
      continue;
    }
    Owned& o = owned->second;
    OffsetCommit& req = it->second;
    if (!o.unsent_journal.empty()) {
      req.journal.insert(req.journal.begin(), o.unsent_journal.begin(), o.unsent_journal.end());
      o.unsent_journal.clear();
    }
    const bool moves = c.state.offset > o.stored_offset;
    if (!moves && (c.journal.empty() || !options_.journal)) {
      // Never backwards (and nothing to do when equal): report what is
      // stored, which covers the request.
      OffsetStoreUpdate u;
      u.kind = OffsetStoreUpdate::Kind::kCommitted;
      u.partition = tp;
      u.offset = o.stored_offset;
      Post(std::move(u));
      it = commits.erase(it);
      continue;
    }
    if (batch.session_id == 0) batch.session_id = o.session_id;
    if (o.session_id != batch.session_id) {
      MarkLost(tp, absl::FailedPreconditionError("owned under an older session"));
      it = commits.erase(it);
      continue;
    }
    coord::FencingToken token{OwnerPath(tp), o.session_id, o.owner_czxid, o.owner_version};
    batch.ops.push_back(coord::OwnershipCheckOp(token));
    batch.op_partition.push_back(tp);
    batch.op_journal.push_back(false);
    if (moves) {
      const std::string data = EncodeStormKafkaOffset(c.state);
      if (o.offset_version < 0) {
        batch.ops.push_back(coord::ZkOp::Create(OffsetPath(tp), data,
                                                coord::ZkCreateMode::kPersistent, std::nullopt,
                                                coord::ZkNodeAccess::kLegacyReadable));
      } else {
        batch.ops.push_back(coord::VersionedSetOp(OffsetPath(tp), data, o.offset_version));
      }
      batch.op_partition.push_back(tp);
      batch.op_journal.push_back(false);
    }
    if (options_.journal) AddJournalOps(c, o, moves, batch);
    batch.sent.push_back(c);
    ++it;
  }
  return batch;
}

JournalEntry ZkOffsetStore::Stamped(JournalEntry e, const Owned& o, const OffsetCommit& c) const {
  if (e.time_ms <= 0) e.time_ms = WallMillis();
  if (e.owner.empty()) e.owner = options_.owner_description;
  if (e.session.empty()) e.session = absl::StrCat(absl::Hex(o.session_id));
  if (e.topology.empty()) e.topology = c.state.topology_id;
  return e;
}

void ZkOffsetStore::AddJournalOps(const OffsetCommit& c, Owned& o, bool moves, CommitBatch& batch) {
  const std::string dir = JournalDir(c.partition);
  for (const JournalEntry& queued : c.journal) {
    batch.ops.push_back(JournalAppendOp(dir, Stamped(queued, o, c)));
    batch.op_partition.push_back(c.partition);
    batch.op_journal.push_back(true);
  }
  if (!moves) return;
  JournalEntry e;
  e.type = JournalEntryType::kCommit;
  e.from = o.stored_offset;
  e.to = c.state.offset;
  e.guarantee = options_.guarantee;
  batch.ops.push_back(JournalAppendOp(dir, Stamped(std::move(e), o, c)));
  batch.op_partition.push_back(c.partition);
  batch.op_journal.push_back(true);
}

void ZkOffsetStore::TrimJournals() {
  if (!options_.journal) return;
  const int64_t every =
      std::clamp<int64_t>(options_.journal_max_entries / 10, 1, kJournalTrimBatch);
  for (auto& [tp, o] : owned_) {
    if (!o.trim_due && o.appends_since_trim < every) continue;
    absl::StatusOr<int> trimmed =
        TrimJournal(*session_, JournalDir(tp), options_.journal_max_entries,
                    options_.journal_retention, WallMillis(),
                    coord::ZkCall{options_.op_timeout, o.session_id});
    if (!trimmed.ok()) {
      spdlog::debug("kafka spout {}: trimming the journal of {} failed: {}", options_.spout_id,
                    Describe(tp), std::string(trimmed.status().message()));
      continue;  // tried again after the next append
    }
    if (*trimmed > 0) trims_.fetch_add(1);
    // A full batch means more may be waiting: trim again on the next pass.
    o.trim_due = *trimmed >= kJournalTrimBatch;
    o.appends_since_trim = 0;
  }
}

void ZkOffsetStore::OnCommitApplied(const std::vector<OffsetCommit>& sent) {
  for (const OffsetCommit& c : sent) {
    Owned& o = owned_[c.partition];
    const bool moved = c.state.offset > o.stored_offset;
    o.appends_since_trim += static_cast<int64_t>(c.journal.size()) + (moved ? 1 : 0);
    if (moved) {
      // A create leaves version 0; a set at version v leaves v + 1.
      o.offset_version = o.offset_version < 0 ? 0 : o.offset_version + 1;
      o.stored_offset = c.state.offset;
    }
    OffsetStoreUpdate u;
    u.kind = OffsetStoreUpdate::Kind::kCommitted;
    u.partition = c.partition;
    u.offset = o.stored_offset;  // entries only: what is stored covers the request
    Post(std::move(u));
  }
}

}  // namespace tempest::spout
