#ifndef TEMPEST_COMMON_CORE_NONE_GROUPER_H_
#define TEMPEST_COMMON_CORE_NONE_GROUPER_H_

#include <cstdint>
#include <vector>

#include "common/core/grouping/stream_grouper.h"

namespace tempest::core {

// None grouping: each tuple goes to one target chosen at random (seeded
// splitmix64), as Storm's NoneGrouper does. Sender thread only.
class NoneGrouper final : public StreamGrouper {
 public:
  NoneGrouper(std::vector<api::TaskId> targets, uint64_t seed)
      : targets_(std::move(targets)), state_(seed) {}

  std::span<const api::TaskId> Choose(const api::Values& /*values*/) override {
    if (targets_.empty()) return {};
    // splitmix64, then a multiply-shift range reduction.
    uint64_t z = (state_ += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    z ^= z >> 31;
    auto index = static_cast<size_t>((static_cast<unsigned __int128>(z) * targets_.size()) >> 64);
    return {&targets_[index], 1};
  }

 private:
  std::vector<api::TaskId> targets_;
  uint64_t state_;
};

}  // namespace tempest::core

#endif  // TEMPEST_COMMON_CORE_NONE_GROUPER_H_
