#ifndef TEMPEST_COMMON_CORE_PARTIAL_KEY_GROUPER_H_
#define TEMPEST_COMMON_CORE_PARTIAL_KEY_GROUPER_H_

#include <array>
#include <cstdint>
#include <vector>

#include "common/core/grouping/stream_grouper.h"

namespace tempest::core {

// Storm's PartialKeyGrouping (key splitting): each key maps to two candidate
// tasks, derived exactly as Storm does (java.util.Random seeded with
// Arrays.hashCode of the key bytes), and each tuple goes to whichever
// candidate this sender has sent fewer tuples so far. Owns per-target send
// counts; sender thread only.
class PartialKeyGrouper final : public StreamGrouper {
 public:
  // `field_indices` empty: the key is the first value's text (Storm's
  // toString().getBytes()); otherwise the 4-byte big-endian hashCodes of the
  // selected values. `targets` sorted ascending.
  PartialKeyGrouper(std::vector<api::TaskId> targets, std::vector<int> field_indices);

  std::span<const api::TaskId> Choose(const api::Values& values) override;

  // The two candidate target indices for `values` (exposed for tests).
  std::array<int, 2> Candidates(const api::Values& values) const;
  int64_t sent(int target_index) const { return sent_[target_index]; }

 private:
  int32_t KeyHash(const api::Values& values) const;

  std::vector<api::TaskId> targets_;
  std::vector<int> field_indices_;
  std::vector<int64_t> sent_;
};

}  // namespace tempest::core

#endif  // TEMPEST_COMMON_CORE_PARTIAL_KEY_GROUPER_H_
