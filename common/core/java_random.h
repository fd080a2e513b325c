#ifndef TEMPEST_COMMON_CORE_JAVA_RANDOM_H_
#define TEMPEST_COMMON_CORE_JAVA_RANDOM_H_

#include <cstdint>

namespace tempest::core {

// java.util.Random's 48-bit linear congruential generator, bit for bit, for
// the places where Storm derives placement from it (partial-key grouping).
// A plain value; single-threaded.
class JavaRandom {
 public:
  explicit JavaRandom(int64_t seed) : seed_((static_cast<uint64_t>(seed) ^ kMultiplier) & kMask) {}

  // Random.next(bits).
  int32_t Next(int bits) {
    seed_ = (seed_ * kMultiplier + kAddend) & kMask;
    return static_cast<int32_t>(seed_ >> (48 - bits));
  }

  // Random.nextInt(bound), bound > 0.
  int32_t NextInt(int32_t bound) {
    int32_t r = Next(31);
    const int32_t m = bound - 1;
    if ((bound & m) == 0) {
      return static_cast<int32_t>((static_cast<int64_t>(bound) * r) >> 31);
    }
    // Reject values from the final partial range, with Java's int overflow.
    for (int32_t u = r;; u = Next(31)) {
      r = u % bound;
      if (static_cast<int32_t>(static_cast<uint32_t>(u) - static_cast<uint32_t>(r) +
                               static_cast<uint32_t>(m)) >= 0) {
        return r;
      }
    }
  }

 private:
  static constexpr uint64_t kMultiplier = 0x5DEECE66DULL;
  static constexpr uint64_t kAddend = 0xBULL;
  static constexpr uint64_t kMask = (uint64_t{1} << 48) - 1;
  uint64_t seed_;
};

}  // namespace tempest::core

#endif  // TEMPEST_COMMON_CORE_JAVA_RANDOM_H_
