#ifndef TEMPEST_COMMON_CORE_PROBE_TABLE_H_
#define TEMPEST_COMMON_CORE_PROBE_TABLE_H_

#include <bit>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <utility>

namespace tempest::core {

// The open-addressing table under AckLedger and RotatingIdMap: 64-bit keys
// (random tuple-tree roots), linear probing, slots holding key and value
// together and stamped with the rotation epoch they were written in, so
// every lookup is one probe that usually touches one cache line and a
// rotation is one sequential scan. Erasure shifts entries back (no
// tombstones). The table grows at half load and never shrinks.
//
// `Slot` is a trivially copyable struct with `uint64_t key`, `uint16_t
// epoch` and `uint8_t used` members (value-initialised: unused). Not
// thread-safe: one owner thread.
template <typename Slot>
class ProbeTable {
 public:
  static constexpr size_t kNotFound = ~size_t{0};

  explicit ProbeTable(size_t capacity = 1024) { Allocate(capacity); }

  size_t size() const { return size_; }
  Slot& at(size_t index) { return slots_[index]; }
  const Slot& at(size_t index) const { return slots_[index]; }

  // The slot of `key`, or kNotFound.
  size_t IndexOf(uint64_t key) const {
    for (size_t i = Home(key); slots_[i].used; i = Next(i)) {
      if (slots_[i].key == key) return i;
    }
    return kNotFound;
  }

  // The slot of `key` and false, or a new slot holding `blank` (its key and
  // used flag set here) and true.
  std::pair<size_t, bool> FindOrInsert(uint64_t key, Slot blank) {
    size_t i = Home(key);
    for (; slots_[i].used; i = Next(i)) {
      if (slots_[i].key == key) return {i, false};
    }
    // Half load keeps linear-probe runs short (expected < 2.5 slots per miss).
    if ((size_ + 1) * 2 > mask_ + 1) {
      Grow();
      i = Home(key);
      while (slots_[i].used) i = Next(i);
    }
    blank.key = key;
    blank.used = 1;
    slots_[i] = blank;
    ++size_;
    return {i, true};
  }

  void EraseAt(size_t index) {
    size_t hole = index;
    for (size_t j = Next(index); slots_[j].used; j = Next(j)) {
      const size_t home = Home(slots_[j].key);
      // Entry j may move to `hole` unless its home lies cyclically in (hole, j].
      if (((j - home) & mask_) >= ((j - hole) & mask_)) {
        slots_[hole] = slots_[j];
        hole = j;
      }
    }
    slots_[hole].used = 0;
    --size_;
  }

  // Erases every entry whose age (epoch - its epoch, mod 2^16) has reached
  // `buckets`, calling expired(slot) for each first. Every entry is erased
  // once its age reaches buckets (< 2^16), so no age ever wraps.
  template <typename Fn>
  void EraseExpired(uint16_t epoch, uint16_t buckets, Fn&& expired) {
    for (size_t i = 0; i <= mask_;) {
      const Slot& slot = slots_[i];
      if (slot.used && static_cast<uint16_t>(epoch - slot.epoch) >= buckets) {
        expired(slot);
        // Backward shifting may move a not-yet-scanned entry into slot i
        // (never behind it), so look at slot i again.
        EraseAt(i);
        continue;
      }
      ++i;
    }
  }

  // Calls fn(slot) for every used slot, in table order.
  template <typename Fn>
  void ForEachSlot(Fn&& fn) const {
    for (size_t i = 0; i <= mask_; ++i) {
      if (slots_[i].used) fn(slots_[i]);
    }
  }

  // Starts loading the slot a later call for `key` will most likely touch.
  void Prefetch(uint64_t key) const {
    const Slot* slot = &slots_[Home(key)];
#if defined(__x86_64__)
    // Not __builtin_prefetch: GCC deletes a loop whose only effect is that
    // builtin (and drops write prefetches without -mprfchw).
    asm volatile("prefetcht0 %0" : : "m"(*slot));
#else
    __builtin_prefetch(slot);
#endif
  }

 private:
  size_t Home(uint64_t key) const {
    // Fibonacci hashing: root ids are random already, but a multiply keeps
    // sequential ids (tests, custom spouts) from clustering.
    return static_cast<size_t>((key * 0x9E3779B97F4A7C15ull) >> shift_);
  }
  size_t Next(size_t i) const { return (i + 1) & mask_; }
  void Allocate(size_t capacity) {
    slots_ = std::make_unique<Slot[]>(capacity);  // Value-initialised: all unused.
    mask_ = capacity - 1;
    shift_ = 64 - std::countr_zero(capacity);
    size_ = 0;
  }
  void Grow() {
    std::unique_ptr<Slot[]> old = std::move(slots_);
    const size_t old_capacity = mask_ + 1;
    Allocate(old_capacity * 2);
    for (size_t i = 0; i < old_capacity; ++i) {
      if (!old[i].used) continue;
      size_t j = Home(old[i].key);
      while (slots_[j].used) j = Next(j);
      slots_[j] = old[i];
      ++size_;
    }
  }

  std::unique_ptr<Slot[]> slots_;
  size_t mask_ = 0;
  int shift_ = 64;
  size_t size_ = 0;
};

}  // namespace tempest::core

#endif  // TEMPEST_COMMON_CORE_PROBE_TABLE_H_
