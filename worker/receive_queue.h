#ifndef TEMPEST_WORKER_RECEIVE_QUEUE_H_
#define TEMPEST_WORKER_RECEIVE_QUEUE_H_

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "worker/event_count.h"
#include "worker/spsc_ring.h"
#include "worker/wait_strategy.h"

namespace tempest::worker {

struct ReceiveQueueOptions {
  // Slots per producer ring (rounded up to a power of two). Total capacity is
  // this times the number of producers.
  size_t ring_capacity = 1024;
  // The most items a producer stages before it makes them visible (and wakes
  // a parked consumer); Flush() publishes sooner. Each producer adapts its
  // actual batch between batch_size/8 and this cap to the consumer (see
  // "Adaptive batch" below), so this is a ceiling, not a per-load setting.
  size_t batch_size = 128;
  // Producers that may ever register (fixed so the consumer can poll a plain
  // array).
  size_t max_producers = 16;
  WaitOptions producer_wait;
  WaitOptions consumer_wait;
};

// Park/wake counts of a ReceiveQueue, for metrics and benchmarks.
struct ReceiveQueueStats {
  uint64_t consumer_parks = 0;      // consumer found the queue empty and slept
  uint64_t consumer_wakes = 0;      // producers woke it (≤ one per producer batch)
  uint64_t producer_parks = 0;      // a producer found its ring full and slept
  uint64_t producer_wakes = 0;      // the consumer woke a producer (≤ one per drain)
  uint64_t producer_publishes = 0;  // batches producers made visible
};

// An executor's bounded multi-producer/single-consumer receive queue.
//
// Design: one SpscRing per registered producer; the consumer polls the rings
// round-robin. Producers therefore never contend with each other (no shared
// CAS on a tail index, unlike a JCTools-style MPSC array), each ring keeps the
// cheap SPSC cached-index protocol, and per-producer FIFO order is inherent.
// There is no global order across producers (Storm gives none either). The
// price is that the consumer's empty check scans every ring, which is fine for
// the handful of producers an executor has (sibling executors in the worker
// plus the network thread), fixed at set-up time.
//
// Batching: Producer::Push() writes the item straight into its ring slot but
// publishes the ring index only every batch_limit() items or on Flush(), so
// there is no second copy and the consumer sees (and is woken for) whole
// batches. The consumer drains up to `max` items per call across all rings
// and frees each ring's slots with one index store.
//
// Adaptive batch (AIMD, as Storm 3's dynamic producer batch): each producer
// keeps its own limit in [batch_size/8, batch_size]. A publish that finds the
// consumer parked (its Notify() had to wake it) halves the limit: the
// consumer is idle, so items held back only add latency. A publish that finds
// it awake adds batch_size/16 (at least 1): it is busy or spinning, so bigger
// batches cost it no latency and save index stores, fences and cache-line
// transfers. Under load the limit sits at the cap; at low rates it falls to
// the floor, which bounds the futex wakes to one per batch_size/8 items (each
// costs both sides ~10 µs; a wake per item is what makes Storm's batch=1
// slow). Wake-early: the first item of a batch is published at once when the
// consumer is parked, so its wake-up runs while the producer stages the rest
// (one wake either way; the consumer finds what was published meanwhile).
// No clock and no shared state beyond the consumer's parking word.
//
// Waiting (WaitStrategy + EventCount): a full ring blocks its producer (spin,
// yield, then futex park) until the consumer has freed at least a batch worth
// of slots — nothing is dropped. An empty queue parks the consumer after a
// short spin. Every notify is one fence plus a load when nobody is parked, and
// at most one futex wake per batch (producer side) or per drain pass
// (consumer side); counts are in Stats().
//
// Threads: RegisterProducer() and Close() from any thread; each Producer from
// one thread at a time; the Pop*/Drain* methods from the single consumer
// thread (the executor). Owns the rings, the Producer handles (valid until
// the queue is destroyed) and the items inside.
//
// Close(): afterwards Push() fails with FailedPrecondition, blocked producers
// return that error, and the consumer drains what was published before the
// close and then gets 0 from the blocking pops. Items staged but not flushed
// when the queue closes are discarded, as are pushes racing with Close().
template <typename T>
class ReceiveQueue {
 public:
  class Producer {
   public:
    Producer(const Producer&) = delete;
    Producer& operator=(const Producer&) = delete;

    // Adds `item`; publishes the batch when it is full. Blocks while the ring
    // is full. Fails only once the queue is closed.
    absl::Status Push(T item) {
      if (queue_->closed_.load(std::memory_order_relaxed)) return ClosedError();
      if (!ring_.TryStage(std::move(item))) {
        PublishAndNotify();
        // Waits for a full cap's worth of room, not the current limit: one
        // wake per large drain rather than a park per few items.
        const size_t want = cap_;
        queue_->producer_wait_.Await(not_full_, [&] {
          return ring_.FreeSlots() >= want || queue_->closed_.load(std::memory_order_acquire);
        });
        if (queue_->closed_.load(std::memory_order_acquire)) return ClosedError();
        const bool staged = ring_.TryStage(std::move(item));
        (void)staged;  // There is room: we just waited for it.
      }
      PublishIfDue();
      return absl::OkStatus();
    }

    // Non-blocking Push for a thread that must never wait (the network
    // thread): false when the ring is full (the items staged so far are
    // published first and `item` is left untouched) or the queue is closed.
    bool TryPush(T& item) {
      if (queue_->closed_.load(std::memory_order_relaxed)) return false;
      if (!ring_.TryStage(std::move(item))) {
        PublishAndNotify();
        return false;
      }
      PublishIfDue();
      return true;
    }

    // Publishes the items pushed since the last batch. Never blocks (they
    // already sit in the ring).
    absl::Status Flush() {
      if (queue_->closed_.load(std::memory_order_relaxed)) return ClosedError();
      if (ring_.staged() > 0) PublishAndNotify();
      return absl::OkStatus();
    }

    // Items pushed but not yet published.
    size_t staged() const { return ring_.staged(); }

    // The current adaptive publish batch, in [batch_size/8, batch_size].
    // Producer thread only (tests and diagnostics).
    size_t batch_limit() const { return limit_; }

   private:
    friend class ReceiveQueue;

    Producer(ReceiveQueue* queue, size_t capacity)
        : queue_(queue),
          ring_(capacity),
          cap_(std::min(queue->options_.batch_size, ring_.capacity())),
          floor_(std::max<size_t>(1, cap_ / 8)),
          step_(std::max<size_t>(1, cap_ / 16)),
          limit_(cap_) {}

    static absl::Status ClosedError() {
      return absl::FailedPreconditionError("receive queue is closed");
    }

    // After staging: publishes a full batch, or the first item of one when
    // the consumer sleeps (wake-early, see the class comment).
    void PublishIfDue() {
      const size_t staged = ring_.staged();
      if (staged >= limit_ || (staged == 1 && queue_->not_empty_.parking())) PublishAndNotify();
    }

    void PublishAndNotify() {
      ring_.Publish();
      // Single writer: a plain load and store, no locked instruction.
      publishes_.store(publishes_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
      // AIMD (see the class comment): halve after waking a parked consumer,
      // grow by one step otherwise.
      if (queue_->not_empty_.Notify()) {
        limit_ = std::max(floor_, limit_ / 2);
      } else {
        limit_ = std::min(cap_, limit_ + step_);
      }
    }

    ReceiveQueue* const queue_;
    SpscRing<T> ring_;
    const size_t cap_;    // batch_size, at most the ring's capacity
    const size_t floor_;  // smallest limit: cap_/8, at least 1
    const size_t step_;   // additive increase per publish to an awake consumer
    size_t limit_;        // current publish batch; producer thread only
    std::atomic<uint64_t> publishes_{0};
    // The consumer notifies this after freeing slots in `ring_`; on its own
    // line so the consumer's check of it does not share the line the
    // producer writes on every publish (publishes_).
    alignas(kFalseSharingRange) EventCount not_full_;
  };

  static absl::StatusOr<std::unique_ptr<ReceiveQueue>> Create(ReceiveQueueOptions options) {
    if (options.ring_capacity < 2) return absl::InvalidArgumentError("ring_capacity must be >= 2");
    if (options.batch_size < 1) return absl::InvalidArgumentError("batch_size must be >= 1");
    if (options.max_producers < 1) return absl::InvalidArgumentError("max_producers must be >= 1");
    return std::unique_ptr<ReceiveQueue>(new ReceiveQueue(std::move(options)));
  }

  ReceiveQueue(const ReceiveQueue&) = delete;
  ReceiveQueue& operator=(const ReceiveQueue&) = delete;

  // Adds a producer ring. Any thread; the handle is valid for the queue's
  // lifetime. Fails when `max_producers` are registered or the queue closed.
  absl::StatusOr<Producer*> RegisterProducer() {
    absl::MutexLock lock(&register_mu_);
    if (closed_.load(std::memory_order_relaxed)) {
      return absl::FailedPreconditionError("receive queue is closed");
    }
    const size_t n = registered_;
    if (n >= options_.max_producers) {
      return absl::ResourceExhaustedError("receive queue has max_producers producers");
    }
    producers_[n] = std::unique_ptr<Producer>(new Producer(this, options_.ring_capacity));
    registered_ = n + 1;
    num_producers_.store(n + 1, std::memory_order_release);
    return producers_[n].get();
  }

  // ---- Consumer thread ----

  // Moves up to `max` published items into out[0..) without blocking.
  size_t TryPopBatch(T* out, size_t max) {
    return TryDrain(max, [&out](T& item) { *out++ = std::move(item); });
  }

  // Like TryPopBatch() but waits for at least one item; returns 0 only once
  // the queue is closed and drained.
  size_t PopBatch(T* out, size_t max) {
    return Drain(
        max, [&out](T& item) { *out++ = std::move(item); }, std::nullopt);
  }

  // Like PopBatch() but also returns 0 when `deadline` passes.
  size_t PopBatchUntil(T* out, size_t max, EventCount::Deadline deadline) {
    return Drain(
        max, [&out](T& item) { *out++ = std::move(item); }, deadline);
  }

  // Calls fn(T&) on up to `max` published items in place (zero-copy), oldest
  // first per producer, visiting producers round-robin. Never blocks.
  template <typename Fn>
  size_t TryDrain(size_t max, Fn&& fn) {
    const size_t n = num_producers_.load(std::memory_order_acquire);
    if (n == 0 || max == 0) return 0;
    size_t taken = 0;
    // Start one ring further each call so no producer is always served last.
    const size_t start = next_ring_ < n ? next_ring_ : 0;
    next_ring_ = start + 1;
    for (size_t k = 0; k < n && taken < max; ++k) {
      Producer& producer = *producers_[(start + k) % n];
      const size_t got = producer.ring_.ConsumeBatch(max - taken, fn);
      if (got > 0) {
        taken += got;
        producer.not_full_.Notify();
      }
    }
    return taken;
  }

  // Blocking TryDrain(): waits for at least one item unless closed and
  // drained (returns 0) or the optional deadline passed (returns 0).
  template <typename Fn>
  size_t Drain(size_t max, Fn&& fn, std::optional<EventCount::Deadline> deadline) {
    for (;;) {
      const size_t got = TryDrain(max, fn);
      if (got > 0) return got;
      if (closed_.load(std::memory_order_acquire)) return TryDrain(max, fn);
      // Read before the exchange: an exchange writes the line even when it
      // changes nothing, and this runs every time the queue is found empty.
      if (woken_.load(std::memory_order_relaxed) &&
          woken_.exchange(false, std::memory_order_acq_rel)) {
        return 0;
      }
      const bool ready = consumer_wait_.Await(
          not_empty_,
          [this] {
            return AnyPublished() || closed_.load(std::memory_order_acquire) ||
                   woken_.load(std::memory_order_acquire);
          },
          deadline);
      if (!ready) return 0;
    }
  }

  // ---- Any thread ----

  void Close() {
    closed_.store(true, std::memory_order_seq_cst);
    not_empty_.Notify();
    absl::MutexLock lock(&register_mu_);
    for (size_t i = 0; i < registered_; ++i) producers_[i]->not_full_.Notify();
  }

  bool closed() const { return closed_.load(std::memory_order_acquire); }
  // How many more producers RegisterProducer() would accept.
  size_t free_producer_slots() const {
    return options_.max_producers - num_producers_.load(std::memory_order_acquire);
  }

  // Makes a blocking Drain() return (0 when nothing was published) once,
  // now or at its next wait, so the consumer can do work that arrived
  // outside the queue. Only for consumers that read 0 as "nothing yet" and
  // check closed() (Drain with a deadline), not PopBatch's "closed".
  void Wake() {
    woken_.store(true, std::memory_order_seq_cst);
    not_empty_.Notify();
  }

  // Published items not yet consumed (an estimate while threads run).
  size_t size() const {
    size_t total = 0;
    const size_t n = num_producers_.load(std::memory_order_acquire);
    for (size_t i = 0; i < n; ++i) total += producers_[i]->ring_.size();
    return total;
  }

  ReceiveQueueStats Stats() const {
    ReceiveQueueStats stats;
    stats.consumer_parks = not_empty_.parks();
    stats.consumer_wakes = not_empty_.wakes();
    const size_t n = num_producers_.load(std::memory_order_acquire);
    for (size_t i = 0; i < n; ++i) {
      stats.producer_parks += producers_[i]->not_full_.parks();
      stats.producer_wakes += producers_[i]->not_full_.wakes();
      stats.producer_publishes += producers_[i]->publishes_.load(std::memory_order_relaxed);
    }
    return stats;
  }

 private:
  explicit ReceiveQueue(ReceiveQueueOptions options)
      : options_(std::move(options)),
        producer_wait_(options_.producer_wait),
        consumer_wait_(options_.consumer_wait),
        producers_(std::make_unique<std::unique_ptr<Producer>[]>(options_.max_producers)) {}

  // Consumer-side check used by the wait predicate.
  bool AnyPublished() {
    const size_t n = num_producers_.load(std::memory_order_acquire);
    for (size_t i = 0; i < n; ++i) {
      if (!producers_[i]->ring_.ConsumerEmpty()) return true;
    }
    return false;
  }

  const ReceiveQueueOptions options_;
  const WaitStrategy producer_wait_;
  const WaitStrategy consumer_wait_;

  absl::Mutex register_mu_;  // serialises RegisterProducer() and Close()
  // Producers registered: the writers' count. Consumers read the published
  // copy, num_producers_, without the lock.
  size_t registered_ ABSL_GUARDED_BY(register_mu_) = 0;
  const std::unique_ptr<std::unique_ptr<Producer>[]> producers_;
  std::atomic<size_t> num_producers_{0};
  // Read by every Push; written once, by Close().
  std::atomic<bool> closed_{false};

  // Consumer state, kept off the line of closed_ that every Push reads.
  alignas(kFalseSharingRange) size_t next_ring_ = 0;
  // Set by Wake() (rare, any thread), cleared by the consumer.
  std::atomic<bool> woken_{false};
  // The consumer parks on this; producers notify it once per published batch.
  alignas(kFalseSharingRange) EventCount not_empty_;
};

}  // namespace tempest::worker

#endif  // TEMPEST_WORKER_RECEIVE_QUEUE_H_
