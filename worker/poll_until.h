#ifndef TEMPEST_WORKER_POLL_UNTIL_H_
#define TEMPEST_WORKER_POLL_UNTIL_H_

#include <chrono>
#include <thread>

namespace tempest::worker {

// Checks `pred` every 2 ms until it holds or `timeout` passed; its last
// answer. For the control thread's shutdown waits, whose conditions (queue
// depths, counters, open connections) have no event to wait on.
template <typename Pred>
bool PollUntil(std::chrono::milliseconds timeout, Pred&& pred) {
  const auto until = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    if (pred()) return true;
    if (std::chrono::steady_clock::now() >= until) return pred();
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
}

}  // namespace tempest::worker

#endif  // TEMPEST_WORKER_POLL_UNTIL_H_
