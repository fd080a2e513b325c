#include "worker/event_count.h"

#include <linux/futex.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <climits>

namespace tempest::worker {
namespace {

void FutexWait(std::atomic<uint32_t>* word, uint32_t expected, const timespec* relative) {
  // Returns on wake, on EAGAIN (the word already changed), on timeout or on a
  // signal; callers re-check their condition in every case.
  syscall(SYS_futex, reinterpret_cast<uint32_t*>(word), FUTEX_WAIT_PRIVATE, expected, relative,
          nullptr, 0);
}

void FutexWakeAll(std::atomic<uint32_t>* word) {
  syscall(SYS_futex, reinterpret_cast<uint32_t*>(word), FUTEX_WAKE_PRIVATE, INT_MAX, nullptr,
          nullptr, 0);
}

}  // namespace

static_assert(sizeof(std::atomic<uint32_t>) == sizeof(uint32_t));

EventCount::Key EventCount::PrepareWait() {
  const uint32_t old = state_.fetch_or(kParkingBit, std::memory_order_seq_cst);
  // Orders the bit before the caller's re-check of its condition (pairs with
  // the fence in Notify()).
  std::atomic_thread_fence(std::memory_order_seq_cst);
  return Key{old | kParkingBit};
}

void EventCount::CancelWait(Key key) {
  // Clear the bit so notifiers skip the syscall; if a notifier got there first
  // it has already cleared it and bumped the epoch.
  uint32_t expected = key.state;
  state_.compare_exchange_strong(expected, key.state & ~kParkingBit, std::memory_order_relaxed);
}

void EventCount::Wait(Key key, std::optional<Deadline> deadline) {
  timespec relative{};
  if (deadline.has_value()) {
    const auto left = *deadline - std::chrono::steady_clock::now();
    if (left <= std::chrono::steady_clock::duration::zero()) {
      CancelWait(key);
      return;
    }
    const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(left).count();
    relative.tv_sec = static_cast<time_t>(ns / 1'000'000'000);
    relative.tv_nsec = static_cast<long>(ns % 1'000'000'000);
  }
  parks_.fetch_add(1, std::memory_order_relaxed);
  FutexWait(&state_, key.state, deadline.has_value() ? &relative : nullptr);
  // On timeout or a spurious return nobody cleared the bit; do it so the next
  // Notify() does not issue a needless wake.
  CancelWait(key);
}

bool EventCount::Notify() {
  // Orders the caller's publishing store before the load of the bit (pairs
  // with the fence in PrepareWait()).
  std::atomic_thread_fence(std::memory_order_seq_cst);
  uint32_t state = state_.load(std::memory_order_relaxed);
  if ((state & kParkingBit) == 0) return false;
  // Only the notifier that wins this exchange wakes; the others see the bit
  // already cleared.
  if (state_.compare_exchange_strong(state, (state + kEpochStep) & ~kParkingBit,
                                     std::memory_order_seq_cst)) {
    wakes_.fetch_add(1, std::memory_order_relaxed);
    FutexWakeAll(&state_);
    return true;
  }
  return false;
}

}  // namespace tempest::worker
