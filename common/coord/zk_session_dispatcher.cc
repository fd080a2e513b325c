// ZkSession's dispatcher thread: the session state machine (events from the
// C client, the local session timer, handle replacement after an expiry)
// and delivery to listeners and watch callbacks.

#include <zookeeper/zookeeper.h>

#include <thread>

#include "absl/time/time.h"
#include "common/coord/zk_c_adapter.h"
#include "common/coord/zk_session.h"
#include "common/coord/zk_session_metrics.h"
#include "common/coord/zk_watch_registry.h"

namespace tempest::coord {

using std::chrono::milliseconds;

void ZkSession::Enqueue(std::function<void()> task) {
  bool wake;
  {
    absl::MutexLock lock(&queue_mu_);
    queue_.push_back(std::move(task));
    // Only the first task of a batch needs to wake the dispatcher; the rest
    // are picked up with it.
    wake = queue_.size() == 1;
  }
  if (wake) queue_cv_.Signal();
}

void ZkSession::DispatchLoop() {
  std::deque<std::function<void()>> batch;
  for (;;) {
    {
      absl::MutexLock lock(&queue_mu_);
      // While suspended, wake often enough to run the local session timer.
      const bool suspended = state() == ZkSessionState::kSuspended;
      const auto deadline =
          DeadlineClock::now() + (suspended ? milliseconds(20) : milliseconds(250));
      while (queue_.empty() && !stopping_) {
        if (!WaitOnce(queue_cv_, queue_mu_, deadline)) break;
      }
      if (queue_.empty() && stopping_) return;
      batch.swap(queue_);
    }
    for (auto& task : batch) task();
    batch.clear();
    CheckLocalTimer();
  }
}

// The one use of Options::clock (the injected clock): tests drive it to
// decide when a suspended session counts as lost.
//
// The C client notices a silent server after 2/3 of the negotiated timeout
// without a reply, so a quarter more after the disconnect is 11/12 of the
// timeout since we last heard from the ensemble: just before the earliest
// moment the server may expire the session and let another client take what
// it owned, with a twelfth left for the owner to stop. Giving up then, not a
// whole timeout after noticing, is what makes a partitioned owner stop
// before a new one can start (docs/adr/0003). A loud disconnect (a reset, a
// server that stopped) is noticed at once and costs ownership after a
// quarter of the timeout unless the client reconnects first.
std::chrono::milliseconds ZkSession::SuspensionBudget(std::chrono::milliseconds negotiated_timeout) {
  return negotiated_timeout / 4;
}

void ZkSession::CheckLocalTimer() {
  bool lost = false;
  {
    absl::MutexLock lock(&state_mu_);
    if (state_ == ZkSessionState::kSuspended && negotiated_timeout_.count() > 0 &&
        options_.clock->Now() - suspended_at_ >= SuspensionBudget(negotiated_timeout_)) {
      lost = true;
    }
  }
  if (lost) Transition(ZkSessionState::kLost, /*by_local_timer=*/true);
}

void ZkSession::OnSessionEvent(uint64_t generation, int zk_state) {
  {
    absl::MutexLock lock(&state_mu_);
    if (generation != generation_) return;  // an old handle's late event
  }
  const ZkSessionState current = state();
  if (current == ZkSessionState::kClosed) return;
  if (zk_state == ZOO_CONNECTED_STATE || zk_state == ZOO_READONLY_STATE) {
    ZkClientSession client;
    {
      absl::ReaderMutexLock lock(&handle_mu_);
      if (handle_ != nullptr && handle_->zh != nullptr) client = ZkCAdapter::SessionOf(handle_->zh);
    }
    {
      absl::MutexLock lock(&state_mu_);
      session_id_ = client.id;
      password_ = std::move(client.password);
      negotiated_timeout_ = client.timeout;
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
        absl::MutexLock lock(&state_mu_);
        suspended_at_ = options_.clock->Now();
      }
      Transition(ZkSessionState::kSuspended);
    }
  }
}

void ZkSession::ReplaceHandle() {
  uint64_t next = 0;
  {
    absl::MutexLock lock(&state_mu_);
    next = ++generation_;
    session_id_ = 0;
    password_.clear();
  }
  watches_->DropAll();
  {
    absl::MutexLock lock(&handle_mu_);
    {
      absl::MutexLock closing(&close_mu_);
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
    absl::MutexLock lock(&state_mu_);
    if (state_ == next) return;
    if (state_ == ZkSessionState::kClosed) return;
    event.previous = state_;
    event.state = next;
    event.session_id = session_id_;
    event.generation = generation_;
    event.by_local_timer = by_local_timer;
    state_ = next;
  }
  state_cv_.SignalAll();
  metrics_->Transition(event.previous, event.state);
  NotifyListeners(event);
}

void ZkSession::NotifyListeners(const ZkSessionEvent& event) {
  std::vector<int> ids;
  {
    absl::MutexLock lock(&listeners_mu_);
    for (const auto& [id, l] : listeners_) ids.push_back(id);
  }
  for (int id : ids) {
    Listener listener;
    {
      absl::MutexLock lock(&listeners_mu_);
      auto it = listeners_.find(id);
      if (it == listeners_.end()) continue;  // unsubscribed by an earlier listener
      listener = it->second;                 // a copy: it may unsubscribe itself
      running_listener_ = id;
      listener_thread_ = std::this_thread::get_id();
    }
    listener(event);
    // Dropped before Unsubscribe can return: the copy may own the listener's state.
    listener = nullptr;
    {
      absl::MutexLock lock(&listeners_mu_);
      running_listener_ = 0;
    }
    listener_done_cv_.SignalAll();
  }
}

void ZkSession::OnWatchEvent(uint64_t generation, const ZkWatchEvent& event) {
  {
    absl::MutexLock lock(&state_mu_);
    if (generation != generation_) return;  // a watch of an old handle
  }
  watches_->Fire(event);
}

}  // namespace tempest::coord
