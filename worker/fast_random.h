#ifndef TEMPEST_WORKER_FAST_RANDOM_H_
#define TEMPEST_WORKER_FAST_RANDOM_H_

#include <cstdint>

namespace tempest::worker {

// Random 64-bit root and edge ids for acking (xoshiro256** seeded through
// splitmix64). Storm uses a thread-local java.util.Random; what matters is
// that ids are uniformly spread 64-bit values, so XOR collisions are 2^-64.
// Not cryptographic. One instance per executor, used from its thread only.
class FastRandom {
 public:
  explicit FastRandom(uint64_t seed) {
    for (uint64_t& s : s_) s = SplitMix(seed);
  }

  uint64_t Next() {
    const uint64_t result = Rotl(s_[1] * 5, 7) * 9;
    const uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = Rotl(s_[3], 45);
    return result;
  }

  // Never 0: a zero edge id would leave no trace in the XOR ledger.
  uint64_t NextNonZero() {
    for (;;) {
      const uint64_t v = Next();
      if (v != 0) return v;
    }
  }

 private:
  static uint64_t Rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  static uint64_t SplitMix(uint64_t& x) {
    uint64_t z = (x += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  uint64_t s_[4];
};

}  // namespace tempest::worker

#endif  // TEMPEST_WORKER_FAST_RANDOM_H_
