#ifndef TEMPEST_WORKER_WAIT_STRATEGY_H_
#define TEMPEST_WORKER_WAIT_STRATEGY_H_

#include <chrono>
#include <optional>
#include <thread>

#include "worker/event_count.h"

namespace tempest::worker {

// Tells the CPU we are busy-waiting (frees pipeline resources for the sibling
// hyper-thread and avoids a memory-order mis-speculation flush on exit).
inline void CpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield" ::: "memory");
#endif
}

struct WaitOptions {
  // Polls with a pause instruction first: a hand-off that is about to happen
  // costs ~100 ns to observe, while parking and being woken costs ~10 µs each
  // way on this machine (performance-anchors.md §5).
  int spin_iterations = 256;
  // Then gives the core away a few times, which lets the other side run when
  // both share one core (2 cores, several busy threads).
  int yield_iterations = 8;
};

// Spin → yield → park waiting for a polled condition. Stateless apart from its
// options; safe to share between threads. The EventCount passed to Await()
// must be the one the thread that makes the condition true calls Notify() on.
class WaitStrategy {
 public:
  WaitStrategy() = default;
  explicit WaitStrategy(WaitOptions options) : options_(options) {}

  const WaitOptions& options() const { return options_; }

  // Returns true once `ready()` is true, or false if `deadline` passed first.
  template <typename Ready>
  bool Await(EventCount& event, Ready&& ready,
             std::optional<EventCount::Deadline> deadline = std::nullopt) const {
    for (int i = 0; i < options_.spin_iterations; ++i) {
      if (ready()) return true;
      CpuRelax();
    }
    for (int i = 0; i < options_.yield_iterations; ++i) {
      if (ready()) return true;
      std::this_thread::yield();
    }
    for (;;) {
      if (deadline.has_value() && std::chrono::steady_clock::now() >= *deadline) return ready();
      const EventCount::Key key = event.PrepareWait();
      if (ready()) {
        event.CancelWait(key);
        return true;
      }
      event.Wait(key, deadline);
      if (ready()) return true;
    }
  }

 private:
  WaitOptions options_;
};

}  // namespace tempest::worker

#endif  // TEMPEST_WORKER_WAIT_STRATEGY_H_
