#ifndef TEMPEST_COMMON_CORE_ACK_LEDGER_H_
#define TEMPEST_COMMON_CORE_ACK_LEDGER_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "common/core/rotating_map.h"

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
// Timeouts follow Storm 2.x: entries live in a RotatingMap of `buckets` (3 by
// default) rotated on every tick tuple (tick period = message timeout), so an
// unfinished tree expires after between (buckets-1) and `buckets` ticks;
// Rotate() returns those trees so the acker can fail them at their spout (Storm
// itself drops them silently and relies on the spout's own timeout; failing
// them early is harmless because spouts ignore unknown roots).
//
// Owns all its entries. Not thread-safe: it belongs to one acker executor and
// is only touched from that executor's thread.
class AckLedger {
 public:
  static constexpr int kDefaultBuckets = 3;
  static constexpr int32_t kUnknownTask = -1;

  explicit AckLedger(int buckets = kDefaultBuckets) : pending_(buckets) {}

  // `__ack_init` [root, xor of the spout's edge ids, spout task]. An init value
  // of 0 (the tuple went nowhere) completes at once.
  AckResult Init(uint64_t root, uint64_t xor_of_edges, int32_t spout_task);
  // `__ack_ack` [root, xor value].
  AckResult Ack(uint64_t root, uint64_t xor_value);
  // `__ack_fail` [root].
  AckResult Fail(uint64_t root);
  // `__ack_reset_timeout` [root]: restarts the tree's timeout. Returns the
  // spout task to forward the reset to, if the tree is known and its init has
  // arrived.
  std::optional<int32_t> ResetTimeout(uint64_t root);

  // Tick: drops the oldest bucket and returns its trees.
  std::vector<ExpiredRoot> Rotate();

  // Trees currently tracked.
  size_t size() const { return pending_.size(); }

 private:
  struct Entry {
    uint64_t value = 0;
    int32_t spout_task = kUnknownTask;
    bool failed = false;
  };

  // The outcome for `entry` after an update; decided trees are erased by the
  // caller (RotatingMap::Upsert).
  static AckResult Decide(const Entry& entry);

  RotatingMap<uint64_t, Entry> pending_;
};

}  // namespace tempest::core

#endif  // TEMPEST_COMMON_CORE_ACK_LEDGER_H_
