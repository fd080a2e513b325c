#ifndef TEMPEST_COMMON_CORE_ROTATING_MAP_H_
#define TEMPEST_COMMON_CORE_ROTATING_MAP_H_

#include <cassert>
#include <cstddef>
#include <functional>
#include <optional>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"

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

}  // namespace tempest::core

#endif  // TEMPEST_COMMON_CORE_ROTATING_MAP_H_
