#ifndef TEMPEST_WORKER_SPSC_RING_H_
#define TEMPEST_WORKER_SPSC_RING_H_

#include <algorithm>
#include <atomic>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <new>
#include <type_traits>
#include <utility>

namespace tempest::worker {

// Distance that keeps two hot fields from sharing a cache line. 128 rather
// than 64 because AMD and Intel cores prefetch cache lines in adjacent pairs,
// so fields 64 bytes apart still interfere.
inline constexpr size_t kFalseSharingRange = 128;

// A bounded lock-free single-producer/single-consumer ring of T.
//
// Owns `capacity()` slots of T (capacity is rounded up to a power of two).
// Exactly one producer thread may call the producer methods and exactly one
// consumer thread the consumer methods; which threads those are may change
// only across a happens-before edge (e.g. a thread join). size()/empty() are
// estimates usable from any thread.
//
// Why it is fast: the two indices live on separate cache lines, and each side
// keeps a private copy of the other side's index, re-reading the shared one
// only when its copy says the ring is full (producer) or empty (consumer). So
// in steady state a batch of n items costs one shared-line transfer in each
// direction rather than n. The batch APIs publish the producer index once per
// batch; TryStage()/Publish() let a producer fill slots in place and make
// them visible later, which is how ReceiveQueue batches without a second copy.
//
// T must be move-constructible and move-assignable. The slots are raw memory
// until the producer's first lap reaches them: a slot is move-constructed on
// its first write and move-assigned after that, and moved out of on pop (a
// moved-from value stays in the slot until overwritten). So a ring costs
// only the memory its traffic has touched: an idle worker's queues, sized
// for bursts, stay untouched pages.
template <typename T>
class SpscRing {
  static_assert(std::is_move_constructible_v<T> && std::is_move_assignable_v<T>);

 public:
  explicit SpscRing(size_t min_capacity)
      : mask_(std::bit_ceil(std::max<size_t>(min_capacity, 2)) - 1),
        slots_(static_cast<T*>(::operator new(sizeof(T) * (mask_ + 1),
                                              std::align_val_t{alignof(T)}))) {}

  ~SpscRing() {
    // Both sides are done (the owner outlives its threads): the slots of the
    // first lap are the constructed ones.
    std::destroy_n(slots_.get(), static_cast<size_t>(std::min<uint64_t>(write_, capacity())));
  }

  SpscRing(const SpscRing&) = delete;
  SpscRing& operator=(const SpscRing&) = delete;

  size_t capacity() const { return mask_ + 1; }

  // ---- Producer side ----

  // Writes `item` into the next slot without making it visible to the
  // consumer. Moves from `item` only on success; false if the ring is full.
  bool TryStage(T&& item) {
    if (!HasRoomFor(1)) return false;
    Put(write_, std::move(item));
    ++write_;
    return true;
  }

  // Makes every staged item visible to the consumer.
  void Publish() { tail_.store(write_, std::memory_order_release); }

  // Items staged but not yet published.
  size_t staged() const {
    return static_cast<size_t>(write_ - tail_.load(std::memory_order_relaxed));
  }

  // Free slots as the producer sees them now (refreshes its copy of the
  // consumer index).
  size_t FreeSlots() {
    cached_head_ = head_.load(std::memory_order_acquire);
    return capacity() - static_cast<size_t>(write_ - cached_head_);
  }

  bool TryPush(T&& item) {
    if (!TryStage(std::move(item))) return false;
    Publish();
    return true;
  }

  // Moves as many of items[0..n) as fit into the ring, publishes them with a
  // single index store, and returns how many were taken (a prefix).
  size_t TryPushBatch(T* items, size_t n) {
    size_t room = capacity() - static_cast<size_t>(write_ - cached_head_);
    if (room < n) {
      cached_head_ = head_.load(std::memory_order_acquire);
      room = capacity() - static_cast<size_t>(write_ - cached_head_);
    }
    const size_t count = std::min(room, n);
    for (size_t i = 0; i < count; ++i) Put(write_ + i, std::move(items[i]));
    write_ += count;
    if (count > 0) Publish();
    return count;
  }

  // ---- Consumer side ----

  bool TryPop(T& out) { return PopBatch(&out, 1) == 1; }

  // Moves up to `max` items into out[0..), oldest first; returns the count.
  size_t PopBatch(T* out, size_t max) {
    return ConsumeBatch(max, [&out](T& item) { *out++ = std::move(item); });
  }

  // Calls fn(T&) on up to `max` items in place, oldest first, then frees
  // their slots with one index store. `fn` may move from the item.
  template <typename Fn>
  size_t ConsumeBatch(size_t max, Fn&& fn) {
    const uint64_t head = head_.load(std::memory_order_relaxed);
    size_t available = static_cast<size_t>(cached_tail_ - head);
    if (available < max) {
      cached_tail_ = tail_.load(std::memory_order_acquire);
      available = static_cast<size_t>(cached_tail_ - head);
    }
    const size_t count = std::min(available, max);
    for (size_t i = 0; i < count; ++i) fn(slots_.get()[(head + i) & mask_]);
    if (count > 0) head_.store(head + count, std::memory_order_release);
    return count;
  }

  // True if the consumer would find nothing published (refreshes its copy).
  bool ConsumerEmpty() {
    const uint64_t head = head_.load(std::memory_order_relaxed);
    if (cached_tail_ != head) return false;
    cached_tail_ = tail_.load(std::memory_order_acquire);
    return cached_tail_ == head;
  }

  // ---- Any thread (estimates) ----

  size_t size() const {
    const uint64_t tail = tail_.load(std::memory_order_acquire);
    const uint64_t head = head_.load(std::memory_order_acquire);
    return tail >= head ? static_cast<size_t>(tail - head) : 0;
  }
  bool empty() const { return size() == 0; }

 private:
  bool HasRoomFor(size_t n) {
    if (write_ - cached_head_ + n <= capacity()) return true;
    cached_head_ = head_.load(std::memory_order_acquire);
    return write_ - cached_head_ + n <= capacity();
  }

  // Writes the slot of producer position `index`: constructs it on the
  // first lap (raw memory until then), assigns it afterwards.
  void Put(uint64_t index, T&& item) {
    T* slot = slots_.get() + (index & mask_);
    if (index <= mask_) {
      std::construct_at(slot, std::move(item));
    } else {
      *slot = std::move(item);
    }
  }

  struct ReleaseStorage {
    void operator()(T* p) const { ::operator delete(p, std::align_val_t{alignof(T)}); }
  };

  // Read-only after construction; shared by both sides.
  alignas(kFalseSharingRange) const size_t mask_;
  const std::unique_ptr<T, ReleaseStorage> slots_;

  // Consumer line: its own index (read by the producer when its copy is
  // stale) and its copy of the producer index.
  alignas(kFalseSharingRange) std::atomic<uint64_t> head_{0};
  uint64_t cached_tail_ = 0;

  // Producer line: the published index, the private write position (items in
  // [tail_, write_) are staged) and its copy of the consumer index.
  alignas(kFalseSharingRange) std::atomic<uint64_t> tail_{0};
  uint64_t write_ = 0;
  uint64_t cached_head_ = 0;
  // The class is kFalseSharingRange-aligned, so its size rounds up and
  // whatever follows it in memory stays off the producer line.
};

}  // namespace tempest::worker

#endif  // TEMPEST_WORKER_SPSC_RING_H_
