#ifndef TEMPEST_WORKER_EVENT_COUNT_H_
#define TEMPEST_WORKER_EVENT_COUNT_H_

#include <atomic>
#include <chrono>
#include <cstdint>
#include <optional>

namespace tempest::worker {

// Lets one thread sleep until a condition it polls may have become true, with
// a notify path that costs no syscall unless that thread is actually parked.
// It is the park/wake half of the wait strategy (see WaitStrategy), backed by
// a Linux futex on one 32-bit word: bit 0 = "a thread is parking", bits 1..31
// = an epoch that every real notification bumps.
//
// Protocol (the waiter must re-check its condition between the two steps):
//   waiter:   key = PrepareWait(); if (cond()) CancelWait(key); else Wait(key);
//   notifier: make cond() true (a release store), then Notify().
// Both sides issue a seq_cst fence between their store and their load, so
// either the waiter sees the condition or the notifier sees the parking bit:
// no lost wake-ups. Only the notifier that clears the bit issues FUTEX_WAKE,
// so a parked thread is woken by at most one syscall however many producers
// notify it.
//
// Threads: at most one thread waits on a given EventCount at a time (the
// receive queue's consumer, or one producer for its own ring); any number of
// threads may Notify() concurrently. Owns nothing but the futex word and its
// counters.
class EventCount {
 public:
  using Deadline = std::chrono::steady_clock::time_point;

  struct Key {
    uint32_t state;
  };

  // Announces that the caller is about to park.
  Key PrepareWait();
  // Withdraws PrepareWait() when the re-check found the condition true.
  void CancelWait(Key key);
  // Parks until notified (or the deadline passes, or a spurious wake-up).
  // Callers re-check their condition afterwards in any case.
  void Wait(Key key, std::optional<Deadline> deadline = std::nullopt);

  // Wakes the waiter if one is parking; a fence and one load otherwise.
  // Returns true if this call found the waiter parking and woke it (callers
  // that adapt their batching read that as "the other side was idle").
  bool Notify();

  // True while a waiter is parking or parked: a hint (relaxed load, may be
  // stale) for callers that act sooner when the other side sleeps; only
  // Notify() is needed for correctness.
  bool parking() const { return (state_.load(std::memory_order_relaxed) & kParkingBit) != 0; }

  // futex waits entered (parks) and futex wakes issued (wakes).
  uint64_t parks() const { return parks_.load(std::memory_order_relaxed); }
  uint64_t wakes() const { return wakes_.load(std::memory_order_relaxed); }

 private:
  static constexpr uint32_t kParkingBit = 1;
  static constexpr uint32_t kEpochStep = 2;

  std::atomic<uint32_t> state_{0};
  std::atomic<uint64_t> parks_{0};
  std::atomic<uint64_t> wakes_{0};
};

}  // namespace tempest::worker

#endif  // TEMPEST_WORKER_EVENT_COUNT_H_
