#ifndef TEMPEST_COMMON_CORE_ROTATING_MAP_H_
#define TEMPEST_COMMON_CORE_ROTATING_MAP_H_

#include <algorithm>
#include <bit>
#include <cassert>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <type_traits>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "common/core/probe_table.h"

namespace tempest::core {

// Storm's RotatingMap: a map split into N time buckets, used for coarse
// timeouts without a timer per entry. New entries go into the newest bucket;
// Rotate() (called on every tick) drops the oldest bucket and hands its
// entries back as expired. An entry put just before a rotation therefore
// expires after N-1 rotations and one put just after after N, so with a tick
// period of T the timeout fires between (N-1)*T and N*T — with 2 buckets (the
// spout's pending map) between T and 2T, with 3 (the acker in Storm 2.x)
// between 2T and 3T.
//
// Owns its keys and values. Not thread-safe: it lives on one executor thread
// (the spout's or the acker's) and every call must come from that thread.
// Lookups search the buckets newest first, so the common case (an entry that
// completes before the next tick) costs one probe.
template <typename K, typename V, typename Hash = absl::Hash<K>, typename Eq = std::equal_to<K>>
class RotatingMap {
 public:
  using Bucket = absl::flat_hash_map<K, V, Hash, Eq>;

  // `num_buckets` must be at least 2 (with 1 bucket an entry could expire
  // immediately after being put).
  explicit RotatingMap(int num_buckets = 3) : buckets_(static_cast<size_t>(num_buckets)) {
    assert(num_buckets >= 2);
  }

  int num_buckets() const { return static_cast<int>(buckets_.size()); }

  // Inserts or replaces `key` in the newest bucket, removing it from the older
  // ones: like Storm, putting an existing key restarts its timeout.
  void Put(const K& key, V value) {
    for (size_t i = 1; i < buckets_.size(); ++i) BucketAt(i).erase(key);
    BucketAt(0).insert_or_assign(key, std::move(value));
  }

  // Returns the value for `key` wherever it is, inserting a default-constructed
  // one into the newest bucket if absent. `second` is true when inserted. The
  // pointer stays valid until the next call that modifies the map.
  std::pair<V*, bool> FindOrInsert(const K& key) {
    if (V* found = Find(key)) return {found, false};
    auto [it, inserted] = BucketAt(0).try_emplace(key);
    return {&it->second, inserted};
  }

  // Finds `key` (inserting a default-constructed value into the newest bucket
  // if absent), calls fn(V&) on it, and erases the entry if fn returns true.
  // Returns fn's result. One probe per bucket searched and no second lookup
  // to erase: the acker's whole per-message update.
  template <typename Fn>
  bool Upsert(const K& key, Fn&& fn) {
    for (size_t i = 0; i < buckets_.size(); ++i) {
      Bucket& bucket = BucketAt(i);
      auto it = bucket.find(key);
      if (it != bucket.end()) return Apply(bucket, it, fn);
    }
    Bucket& newest = BucketAt(0);
    return Apply(newest, newest.try_emplace(key).first, fn);
  }

  // The value for `key`, or nullptr. Valid until the next modification.
  V* Find(const K& key) {
    for (size_t i = 0; i < buckets_.size(); ++i) {
      Bucket& bucket = BucketAt(i);
      auto it = bucket.find(key);
      if (it != bucket.end()) return &it->second;
    }
    return nullptr;
  }
  const V* Find(const K& key) const { return const_cast<RotatingMap*>(this)->Find(key); }

  bool Contains(const K& key) const { return Find(key) != nullptr; }

  // Moves `key` into the newest bucket (restarting its timeout). Returns false
  // if absent.
  bool Touch(const K& key) {
    if (BucketAt(0).contains(key)) return true;
    for (size_t i = 1; i < buckets_.size(); ++i) {
      Bucket& bucket = BucketAt(i);
      auto node = bucket.extract(key);
      if (!node.empty()) {
        BucketAt(0).insert(std::move(node));
        return true;
      }
    }
    return false;
  }

  // Removes `key` and returns its value, or nullopt if absent.
  std::optional<V> Remove(const K& key) {
    for (size_t i = 0; i < buckets_.size(); ++i) {
      auto node = BucketAt(i).extract(key);
      if (!node.empty()) return std::move(node.mapped());
    }
    return std::nullopt;
  }

  // Removes `key`; returns whether it was present. Cheaper than Remove().
  bool Erase(const K& key) {
    for (size_t i = 0; i < buckets_.size(); ++i) {
      if (BucketAt(i).erase(key) > 0) return true;
    }
    return false;
  }

  // Drops the oldest bucket and returns its entries (the expired ones); an
  // empty bucket becomes the newest.
  Bucket Rotate() {
    const size_t oldest = Index(buckets_.size() - 1);
    Bucket expired = std::move(buckets_[oldest]);
    buckets_[oldest] = Bucket();
    newest_ = oldest;
    return expired;
  }

  size_t size() const {
    size_t total = 0;
    for (const Bucket& bucket : buckets_) total += bucket.size();
    return total;
  }
  bool empty() const { return size() == 0; }

  // Calls fn(key, value) for every entry, newest bucket first.
  template <typename Fn>
  void ForEach(Fn&& fn) const {
    for (size_t i = 0; i < buckets_.size(); ++i) {
      for (const auto& [key, value] : BucketAt(i)) fn(key, value);
    }
  }

 private:
  template <typename It, typename Fn>
  static bool Apply(Bucket& bucket, It it, Fn& fn) {
    const bool erase = fn(it->second);
    if (erase) bucket.erase(it);
    return erase;
  }

  // Bucket i counting from the newest (0) to the oldest (N-1). The buckets are
  // a ring so rotation moves no maps around.
  // (A compare instead of `%`: a 64-bit division would cost more than the
  // hash probe on the acker's hot path.)
  size_t Index(size_t i) const {
    const size_t index = newest_ + i;
    return index < buckets_.size() ? index : index - buckets_.size();
  }
  Bucket& BucketAt(size_t i) { return buckets_[Index(i)]; }
  const Bucket& BucketAt(size_t i) const { return buckets_[Index(i)]; }

  std::vector<Bucket> buckets_;
  size_t newest_ = 0;
};

// RotatingMap's timeouts for 64-bit random ids (tuple-tree roots) with a
// small trivially copyable value: the spout's pending map, touched twice per
// tree (Put on emit, Remove on the acker's reply). Expiry is exactly
// RotatingMap's with the same number of buckets: an entry put or touched
// expires on the `num_buckets`-th Rotate() after that.
//
// Storage (core::ProbeTable, shared with AckLedger): one open-addressing table with
// linear probing, key, value and the rotation epoch in one 32-byte slot, so
// each operation is one probe that usually touches one cache line, where N
// absl maps cost a control-byte line plus a slot line per bucket probed (and
// Put probed the older buckets to erase the key). Erasure shifts entries
// back (no tombstones); Rotate() is one sequential scan. The table grows at
// half load and never shrinks. Prefetch() lets a caller holding a batch of
// keys hide the miss on the slot it will touch next.
//
// Owns its entries. Not thread-safe: one executor thread only.
template <typename V>
class RotatingIdMap {
  static_assert(std::is_trivially_copyable_v<V>, "values are moved by memcpy-like copies");
  static_assert(sizeof(V) <= 16 && alignof(V) <= 8, "a slot holds 16 bytes of value");

 public:
  // `num_buckets` must be at least 2 (as for RotatingMap).
  explicit RotatingIdMap(int num_buckets = 2)
      : buckets_(static_cast<uint16_t>(std::max(num_buckets, 2))) {
    assert(num_buckets >= 2 && num_buckets < 0xffff);
  }

  int num_buckets() const { return buckets_; }
  size_t size() const { return table_.size(); }
  bool empty() const { return table_.size() == 0; }

  // Inserts or replaces `key`; either way its timeout restarts.
  void Put(uint64_t key, const V& value) {
    Slot& slot = table_.at(table_.FindOrInsert(key, Slot{}).first);
    slot.value = value;
    slot.epoch = epoch_;
  }

  // The value for `key`, or nullptr. Valid until the next modification.
  V* Find(uint64_t key) {
    const size_t i = table_.IndexOf(key);
    return i == Table::kNotFound ? nullptr : &table_.at(i).value;
  }
  bool Contains(uint64_t key) const { return table_.IndexOf(key) != Table::kNotFound; }

  // Restarts `key`'s timeout. Returns false if absent.
  bool Touch(uint64_t key) {
    const size_t i = table_.IndexOf(key);
    if (i == Table::kNotFound) return false;
    table_.at(i).epoch = epoch_;
    return true;
  }

  // Removes `key` and returns its value, or nullopt if absent.
  std::optional<V> Remove(uint64_t key) {
    const size_t i = table_.IndexOf(key);
    if (i == Table::kNotFound) return std::nullopt;
    const V value = table_.at(i).value;
    table_.EraseAt(i);
    return value;
  }

  // Starts loading the slot a later call for `key` will most likely touch.
  void Prefetch(uint64_t key) const { table_.Prefetch(key); }

  // A tick: removes and returns (key, value) of every entry put or touched
  // `num_buckets` rotations ago. The caller acts on them after the scan, so
  // it may touch the map again (a spout's Fail may emit).
  std::vector<std::pair<uint64_t, V>> Rotate() {
    ++epoch_;
    std::vector<std::pair<uint64_t, V>> expired;
    table_.EraseExpired(epoch_, buckets_,
                        [&](const Slot& slot) { expired.emplace_back(slot.key, slot.value); });
    return expired;
  }

  // Calls fn(key, value) for every entry (in table order).
  template <typename Fn>
  void ForEach(Fn&& fn) const {
    table_.ForEachSlot([&](const Slot& slot) { fn(slot.key, slot.value); });
  }

 private:
  struct Slot {
    uint64_t key;
    V value;
    uint16_t epoch;  // Rotation count (mod 2^16) when put or last touched.
    uint8_t used;
  };
  static_assert(sizeof(Slot) <= 32);
  using Table = ProbeTable<Slot>;

  Table table_;
  uint16_t epoch_ = 0;
  const uint16_t buckets_;
};

}  // namespace tempest::core

#endif  // TEMPEST_COMMON_CORE_ROTATING_MAP_H_
