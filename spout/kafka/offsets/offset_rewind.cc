#include "spout/kafka/offsets/offset_rewind.h"

#include <unistd.h>

#include <nlohmann/json.hpp>

#include "absl/strings/str_cat.h"
#include "common/core/status_macros.h"
#include "common/os/limits.h"
#include "spdlog/spdlog.h"
#include "spout/kafka/offsets/offset_journal.h"

namespace tempest::spout {
namespace {

using SteadyClock = std::chrono::steady_clock;

int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// Bounded retries of a fenced write that lost a race with a commit.
constexpr int kWriteAttempts = 4;

}  // namespace

std::string EncodeRewindRequest(const RewindRequest& r) {
  nlohmann::json j = {{"offset", r.offset},
                      {"requested_by", r.requested_by},
                      {"requested_at", r.requested_at_ms},
                      {"status", r.status}};
  if (r.from >= 0) j["from"] = r.from;
  if (!r.owner.empty()) j["owner"] = r.owner;
  if (!r.message.empty()) j["message"] = r.message;
  return j.dump();
}

absl::StatusOr<RewindRequest> DecodeRewindRequest(std::string_view json) {
  nlohmann::json j = nlohmann::json::parse(json, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) {
    return absl::InvalidArgumentError("rewind request is not a JSON object");
  }
  RewindRequest r;
  auto offset = j.find("offset");
  if (offset == j.end() || !offset->is_number_integer() || offset->get<int64_t>() < 0) {
    return absl::InvalidArgumentError("rewind request has no valid \"offset\"");
  }
  r.offset = offset->get<int64_t>();
  auto text = [&j](const char* key) {
    auto it = j.find(key);
    return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
  };
  auto number = [&j](const char* key, int64_t fallback) {
    auto it = j.find(key);
    return it != j.end() && it->is_number_integer() ? it->get<int64_t>() : fallback;
  };
  r.requested_by = text("requested_by");
  r.requested_at_ms = number("requested_at", 0);
  r.status = text("status");
  if (r.status != "pending" && r.status != "done" && r.status != "refused") {
    return absl::InvalidArgumentError(absl::StrCat("rewind request has an unknown status \"",
                                                   r.status.substr(0, 40), "\""));
  }
  r.from = number("from", -1);
  r.owner = text("owner");
  r.message = text("message");
  return r;
}

std::string LocalHostName() {
  char name[256] = {0};
  if (::gethostname(name, sizeof(name) - 1) != 0 || name[0] == '\0') return "localhost";
  return name;
}

std::string RewindRequestPath(const std::string& zk_root, const std::string& spout_id,
                              const std::string& topic, int partition, bool topic_level) {
  std::string path = OwnerNodePath(zk_root, spout_id, topic, partition, topic_level);
  const std::string owners = "/@owners/";
  const size_t at = path.rfind(owners);
  if (at != std::string::npos) path.replace(at, owners.size(), "/@rewind/");
  return path;
}

absl::StatusOr<RewindRequest> RequestRewind(coord::ZkSession& session, const std::string& path,
                                            const RewindRequest& request,
                                            std::chrono::milliseconds timeout,
                                            const std::optional<coord::ZkAcl>& acl) {
  coord::ZkCreateOptions create;
  create.create_parents = true;
  create.acl = acl;
  absl::StatusOr<std::string> created = session.Create(path, EncodeRewindRequest(request), create);
  if (absl::IsAlreadyExists(created.status())) {
    return absl::AlreadyExistsError(
        absl::StrCat("another rewind request is pending at ", path,
                     " (delete it if no `tempest offsets set` is waiting on it)"));
  }
  RETURN_IF_ERROR(created.status());
  const auto deadline = SteadyClock::now() + timeout;
  // Polled: a bounded number of reads, one every 100 ms.
  for (int i = 0; i < 100000; ++i) {
    absl::StatusOr<coord::ZkNode> node = session.Get(path);
    if (node.ok()) {
      absl::StatusOr<RewindRequest> answer = DecodeRewindRequest(node->data);
      if (answer.ok() && answer->status != "pending") {
        // Best effort: the answer is what the tool needed; a node left behind
        // is named by the next request's AlreadyExists.
        (void)session.Delete(path, node->stat.version);
        return answer;
      }
    } else if (absl::IsNotFound(node.status())) {
      return absl::AbortedError(absl::StrCat(path, " was removed before the owner answered"));
    }
    if (SteadyClock::now() >= deadline) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  // Withdraw: only the unanswered request (version 0) is deleted, so an
  // answer written meanwhile is read instead.
  absl::Status withdrawn = session.Delete(path, 0);
  if (withdrawn.ok() || absl::IsNotFound(withdrawn)) {
    return absl::DeadlineExceededError("no answer");
  }
  ASSIGN_OR_RETURN(const coord::ZkNode node, session.Get(path));
  absl::StatusOr<RewindRequest> answer = DecodeRewindRequest(node.data);
  // Best effort, as above: the answer is read.
  (void)session.Delete(path, node.stat.version);
  return answer;
}

RewindWatcher::RewindWatcher(coord::ZkSession* session, Options options)
    : session_(session), options_(std::move(options)), shared_(std::make_shared<Shared>()) {
  start_status_ = os::StartThread(thread_, "the offset rewind watcher", [this] { Loop(); });
}

RewindWatcher::~RewindWatcher() {
  {
    absl::MutexLock lock(&shared_->mu);
    stop_ = true;
    shared_->wake = true;
  }
  if (thread_.joinable()) thread_.join();
}

void RewindWatcher::Watch(const TopicPartition& tp, int64_t session_id) {
  absl::MutexLock lock(&shared_->mu);
  Watched& w = watched_[tp];
  if (w.session_id != session_id) w = Watched{session_id};
  shared_->wake = true;
}

void RewindWatcher::Unwatch(const TopicPartition& tp) {
  absl::MutexLock lock(&shared_->mu);
  watched_.erase(tp);
}

void RewindWatcher::Apply(const Pending& pending, StormKafkaOffset state) {
  absl::MutexLock lock(&shared_->mu);
  jobs_.push_back(Job{pending, std::move(state), ""});
  shared_->wake = true;
}

void RewindWatcher::Refuse(const Pending& pending, std::string why) {
  absl::MutexLock lock(&shared_->mu);
  jobs_.push_back(Job{pending, std::nullopt, std::move(why)});
  shared_->wake = true;
}

void RewindWatcher::Reposition(const TopicPartition& tp, StormKafkaOffset state,
                               std::string reason) {
  Pending own;
  own.partition = tp;
  own.request.offset = state.offset;
  own.version = -1;
  absl::MutexLock lock(&shared_->mu);
  jobs_.push_back(Job{std::move(own), std::move(state), std::move(reason)});
  shared_->wake = true;
}

std::vector<RewindWatcher::Pending> RewindWatcher::TakeRequests() {
  absl::MutexLock lock(&shared_->mu);
  std::vector<Pending> out;
  out.swap(requests_);
  return out;
}

std::vector<RewindWatcher::Outcome> RewindWatcher::TakeOutcomes() {
  absl::MutexLock lock(&shared_->mu);
  std::vector<Outcome> out;
  out.swap(outcomes_);
  return out;
}

bool RewindWatcher::HasWork() const {
  absl::MutexLock lock(&shared_->mu);
  return !requests_.empty() || !outcomes_.empty();
}

void RewindWatcher::Loop() {
  auto next_poll = SteadyClock::now();
  for (;;) {
    std::vector<Job> jobs;
    std::map<TopicPartition, Watched> watched;
    std::set<TopicPartition> fired;
    bool poll = false;
    {
      absl::MutexLock lock(&shared_->mu);
      shared_->mu.AwaitWithTimeout(absl::Condition(&shared_->wake),
                                   absl::FromChrono(next_poll - SteadyClock::now()));
      if (stop_) return;
      shared_->wake = false;
      jobs.swap(jobs_);
      fired.swap(shared_->fired);
      watched = watched_;
      if (SteadyClock::now() >= next_poll) {
        poll = true;
        next_poll = SteadyClock::now() + options_.poll_interval;
      }
    }
    for (const Job& job : jobs) {
      auto it = watched.find(job.pending.partition);
      const int64_t sid = it == watched.end() ? 0 : it->second.session_id;
      Outcome outcome;
      if (job.state.has_value()) {
        outcome = Write(job, sid);
      } else {
        outcome.partition = job.pending.partition;
        outcome.status = Answer(job, sid);
        if (outcome.status.ok()) outcome.status = absl::CancelledError(job.why);
      }
      absl::MutexLock lock(&shared_->mu);
      outcomes_.push_back(std::move(outcome));
    }
    for (auto& [tp, w] : watched) {
      if (fired.contains(tp)) w.armed = false;
      if (w.armed && !poll) continue;
      CheckRequest(tp, w);
      absl::MutexLock lock(&shared_->mu);
      auto live = watched_.find(tp);
      if (live != watched_.end() && live->second.session_id == w.session_id) live->second = w;
    }
  }
}

void RewindWatcher::CheckRequest(const TopicPartition& tp, Watched& w) {
  if (session_->session_id() != w.session_id) return;  // not ours to answer any more
  const std::string path = RewindRequestPath(options_.zk_root, options_.spout_id, tp.topic,
                                             tp.partition, options_.topic_level);
  std::weak_ptr<Shared> shared = shared_;
  const coord::ZkCall call{options_.op_timeout, w.session_id};
  absl::StatusOr<std::optional<coord::ZkStat>> exists = session_->ExistsAndWatch(
      path,
      [shared, tp](const coord::ZkWatchEvent&) {
        std::shared_ptr<Shared> s = shared.lock();
        if (s == nullptr) return;
        absl::MutexLock lock(&s->mu);
        s->fired.insert(tp);
        s->wake = true;
      },
      call);
  if (!exists.ok()) return;
  w.armed = true;
  if (!exists->has_value() || (*exists)->czxid == w.seen_czxid) return;
  absl::StatusOr<coord::ZkNode> node = session_->Get(path, call);
  if (!node.ok()) return;
  absl::StatusOr<RewindRequest> request = DecodeRewindRequest(node->data);
  if (!request.ok()) {
    spdlog::warn("kafka spout {}: ignoring the malformed rewind request {}: {}", options_.spout_id,
                 path, std::string(request.status().message()));
    w.seen_czxid = node->stat.czxid;
    return;
  }
  if (request->status != "pending") return;  // answered; the tool removes it
  w.seen_czxid = node->stat.czxid;
  absl::MutexLock lock(&shared_->mu);
  requests_.push_back(Pending{tp, *request, node->stat.version});
}

absl::Status RewindWatcher::Answer(const Job& job, int64_t session_id) {
  const TopicPartition& tp = job.pending.partition;
  RewindRequest answer = job.pending.request;
  answer.status = "refused";
  answer.owner = options_.owner_description;
  answer.message = job.why;
  const std::string path = RewindRequestPath(options_.zk_root, options_.spout_id, tp.topic,
                                             tp.partition, options_.topic_level);
  absl::StatusOr<coord::ZkStat> set =
      session_->Set(path, EncodeRewindRequest(answer), job.pending.version,
                    coord::ZkCall{options_.op_timeout, session_id});
  return set.ok() ? absl::OkStatus() : set.status();
}

namespace {

// The offset stored in `node` before the write; -1 for none (or unreadable).
int64_t StoredOffsetOf(const absl::StatusOr<coord::ZkNode>& node) {
  if (!node.ok()) return -1;
  absl::StatusOr<StormKafkaOffset> d = DecodeStormKafkaOffset(node->data);
  return d.ok() ? d->offset : -1;
}

// The journal entry of the write: "reset" for the owner's own move (no
// request node), "rewind" for an operator's request.
JournalEntry RewindEntry(const RewindWatcher::Options& o, const RewindWatcher::Pending& pending,
                         const std::string& why, int64_t session_id, int64_t from, int64_t to) {
  const bool own_move = pending.version < 0;
  JournalEntry entry;
  entry.type = own_move ? JournalEntryType::kReset : JournalEntryType::kRewind;
  entry.time_ms = NowMs();
  entry.from = from;
  entry.to = to;
  entry.owner = o.owner_description;
  entry.session = absl::StrCat(absl::Hex(session_id));
  entry.topology = o.topology_id;
  entry.reason = own_move ? why : absl::StrCat("requested by ", pending.request.requested_by);
  return entry;
}

}  // namespace

RewindWatcher::RewindPaths RewindWatcher::PathsOf(const TopicPartition& tp) const {
  const auto path = [&](auto fn) {
    return fn(options_.zk_root, options_.spout_id, tp.topic, tp.partition, options_.topic_level);
  };
  return RewindPaths{path(OwnerNodePath), path(OffsetNodePath), path(RewindRequestPath),
                     path(JournalDirPath)};
}

std::vector<coord::ZkOp> RewindWatcher::WriteOps(const Job& job, int64_t session_id,
                                                 const RewindPaths& paths,
                                                 const coord::ZkNode& owner,
                                                 const absl::StatusOr<coord::ZkNode>& offset,
                                                 const Outcome& out) const {
  RewindRequest answer = job.pending.request;
  answer.status = "done";
  answer.from = out.from;
  answer.owner = options_.owner_description;
  const std::string data = EncodeStormKafkaOffset(*job.state);
  std::vector<coord::ZkOp> ops;
  // Op 1 is the offset write: Write retries only a conflict there.
  ops.push_back(coord::ZkOp::Check(paths.owner, owner.stat.version));
  ops.push_back(offset.ok() ? coord::ZkOp::Set(paths.offset, data, offset->stat.version)
                            : coord::ZkOp::Create(paths.offset, data));
  if (job.pending.version >= 0) {
    ops.push_back(
        coord::ZkOp::Set(paths.request, EncodeRewindRequest(answer), job.pending.version));
  }
  ops.push_back(JournalAppendOp(
      paths.journal_dir,
      RewindEntry(options_, job.pending, job.why, session_id, out.from, out.to)));
  return ops;
}

RewindWatcher::Outcome RewindWatcher::Write(const Job& job, int64_t session_id) {
  Outcome out;
  out.partition = job.pending.partition;
  out.to = job.state->offset;
  const RewindPaths paths = PathsOf(job.pending.partition);
  const coord::ZkCall call{options_.op_timeout, session_id};
  if (session_id == 0 || session_->session_id() != session_id) {
    out.status = absl::FailedPreconditionError("not the partition's owner any more");
    return out;
  }
  if (absl::Status s = EnsureJournalDir(*session_, paths.journal_dir, call); !s.ok()) {
    out.status = s;
    return out;
  }
  for (int attempt = 0; attempt < kWriteAttempts; ++attempt) {
    absl::StatusOr<coord::ZkNode> owner = session_->Get(paths.owner, call);
    if (!owner.ok() || owner->stat.ephemeral_owner != session_id) {
      out.status = absl::FailedPreconditionError(
          absl::StrCat("fenced: ", paths.owner, " is not held by our session"));
      return out;
    }
    absl::StatusOr<coord::ZkNode> offset = session_->Get(paths.offset, call);
    if (!offset.ok() && !absl::IsNotFound(offset.status())) {
      out.status = offset.status();
      return out;
    }
    out.from = StoredOffsetOf(offset);
    const std::vector<coord::ZkOp> ops = WriteOps(job, session_id, paths, *owner, offset, out);
    int failed = -1;
    absl::StatusOr<std::vector<coord::ZkOpResult>> result = session_->Multi(ops, call, &failed);
    if (result.ok()) {
      out.applied = true;
      out.status = absl::OkStatus();
      return out;
    }
    out.status = result.status();
    // Only a concurrent change of the offset node (a commit that was already
    // on its way) is worth another attempt.
    if (failed != 1) return out;
  }
  return out;
}

}  // namespace tempest::spout
