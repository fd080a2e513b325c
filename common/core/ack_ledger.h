#ifndef TEMPEST_COMMON_CORE_ACK_LEDGER_H_
#define TEMPEST_COMMON_CORE_ACK_LEDGER_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "common/core/probe_table.h"

namespace tempest::core {

// What an acker must do after applying one message to the ledger.
enum class AckOutcome {
  kPending,    // Tree still open (or its spout task is not known yet): send nothing.
  kCompleted,  // Every edge acked: send a direct ack to `spout_task`.
  kFailed,     // Some bolt failed the tree: send a direct fail to `spout_task`.
};

struct AckResult {
  AckOutcome outcome = AckOutcome::kPending;
  // The spout task to reply to; meaningful for kCompleted and kFailed only.
  int32_t spout_task = -1;

  friend bool operator==(const AckResult&, const AckResult&) = default;
};

// A tree dropped by AckLedger::Rotate() because it did not finish in time.
struct ExpiredRoot {
  uint64_t root = 0;
  // AckLedger::kUnknownTask if the init never arrived (only acks/fails did);
  // then there is nobody to tell.
  int32_t spout_task = -1;
  bool failed = false;
};

// The acker's XOR ledger (Storm's Acker algorithm, storm-facts.md §3.1): one
// 64-bit value per tuple tree, keyed by the random root id. The spout's init
// XORs in the ids of the edges it emitted; each bolt ack XORs in the id of the
// edge it consumed and of every edge it emitted anchored to it, so the value
// returns to 0 exactly when every edge has been acked (barring a 2^-64
// collision, as in Storm).
//
// Messages for one root may arrive in any order: an ack or fail that beats the
// init creates the entry, and the tree is only reported once the init has
// supplied the spout task. Each tree is reported (completed or failed) at most
// once and then forgotten; later messages for that root start a fresh entry
// that simply times out.
//
// Timeouts have exactly the semantics of Storm 2.x's RotatingMap with
// `buckets` (3 by default) buckets rotated on every tick tuple (tick period =
// message timeout): an unfinished tree expires on the `buckets`-th Rotate()
// after it was created, i.e. between (buckets-1) and `buckets` timeouts later.
// Rotate() returns those trees so the acker can fail them at their spout
// (Storm itself drops them silently and relies on the spout's own timeout;
// failing them early is harmless because spouts ignore unknown roots).
//
// Storage: instead of N hash maps (core::RotatingMap, which costs a probe per
// bucket on every miss) the ledger keeps one open-addressing table with
// linear probing, 24-byte slots holding key and value together, and each
// entry stamped with the rotation epoch it was created in. Every message is
// then a single probe that usually touches one cache line, and a rotation is
// one sequential scan of the table (once per message timeout, 30 s by
// default). Erasure uses backward shifting, so there are no tombstones
// (core::ProbeTable, shared with the spout's RotatingIdMap).
// The table grows at half load and never shrinks (the number of trees in
// flight is bounded by topology.max.spout.pending).
//
// Owns all its entries. Not thread-safe: it belongs to one acker executor and
// is only touched from that executor's thread.
class AckLedger {
 public:
  static constexpr int kDefaultBuckets = 3;
  static constexpr int32_t kUnknownTask = -1;

  // `buckets` is clamped to [2, 1000].
  explicit AckLedger(int buckets = kDefaultBuckets);

  // `__ack_init` [root, xor of the spout's edge ids, spout task]. An init value
  // of 0 (the tuple went nowhere, or a bolt's ack carried the init of a tree
  // it finished) completes at once, without an entry when none exists. A
  // bolt's ack may stand in for the init: its value is then the init's XOR
  // and the ack's together, which is the same sum.
  AckResult Init(uint64_t root, uint64_t xor_of_edges, int32_t spout_task);
  // `__ack_ack` [root, xor value].
  AckResult Ack(uint64_t root, uint64_t xor_value);
  // `__ack_fail` [root].
  AckResult Fail(uint64_t root);
  // `__ack_reset_timeout` [root]: restarts the tree's timeout. Returns the
  // spout task to forward the reset to, if the tree is known and its init has
  // arrived.
  std::optional<int32_t> ResetTimeout(uint64_t root);

  // Tick: expires every tree created (or last reset) `buckets` ticks ago and
  // returns them.
  std::vector<ExpiredRoot> Rotate();

  // Trees currently tracked.
  size_t size() const { return table_.size(); }

  // Starts loading the slot a later call for `root` will most likely touch:
  // an acker that sees a few messages ahead hides the cache miss of each
  // new tree's slot (its first message lands on a random line).
  void Prefetch(uint64_t root) const { table_.Prefetch(root); }

 private:
  struct Slot {
    uint64_t key;  // the tree's root id
    uint64_t value;
    int32_t spout_task;
    uint16_t epoch;  // Rotation count (mod 2^16) when created or last reset.
    uint8_t used;
    uint8_t failed;
  };
  static_assert(sizeof(Slot) == 24);

  // The slot of `root`, inserted (value 0, task unknown) if absent.
  size_t FindOrInsert(uint64_t root);
  // Reports the tree in `index` if decided, and then erases it.
  AckResult SettleAt(size_t index);

  ProbeTable<Slot> table_;
  uint16_t epoch_ = 0;
  const uint16_t buckets_;
};

}  // namespace tempest::core

#endif  // TEMPEST_COMMON_CORE_ACK_LEDGER_H_
