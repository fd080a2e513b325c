#ifndef TEMPEST_COMMON_CORE_JAVA_HASH_H_
#define TEMPEST_COMMON_CORE_JAVA_HASH_H_

#include <cstdint>
#include <span>
#include <string_view>

#include "common/api/value.h"

namespace tempest::core {

// Java hashCode emulation, so fields grouping places keys on the same task
// index as Storm (TupleUtils.chooseTaskIndex = floorMod(Arrays.deepHashCode(
// selected values), n)). Values map to Java types as Storm's Kafka/multilang
// paths produce them: string -> String (hash over UTF-16 code units), int ->
// Long, double -> Double, bool -> Boolean, bytes -> byte[] (Arrays.hashCode),
// list -> List, map -> Map, nil -> null (0). Pure functions; any thread.

// String.hashCode of UTF-8 `s` decoded to UTF-16 (invalid sequences count
// as U+FFFD, as Java's decoder replaces them).
int32_t JavaStringHashCode(std::string_view utf8);
// Long.hashCode / Integer.hashCode / Double.hashCode / Boolean.hashCode.
inline int32_t JavaLongHashCode(int64_t v) {
  return static_cast<int32_t>(static_cast<uint64_t>(v) ^ (static_cast<uint64_t>(v) >> 32));
}
inline int32_t JavaIntegerHashCode(int32_t v) { return v; }
int32_t JavaDoubleHashCode(double v);
inline int32_t JavaBooleanHashCode(bool v) { return v ? 1231 : 1237; }
// Arrays.hashCode(byte[]) (signed bytes).
int32_t JavaBytesHashCode(std::string_view bytes);
// hashCode of one value under the mapping above.
int32_t JavaHashCode(const api::Value& v);
// Arrays.deepHashCode over values[indices[0]], values[indices[1]], ...
int32_t JavaDeepHashCode(const api::Values& values, std::span<const int> indices);
// Arrays.deepHashCode over all of `values`.
int32_t JavaDeepHashCode(std::span<const api::Value> values);
// Math.floorMod(x, n) for n > 0.
inline int32_t FloorMod(int32_t x, int32_t n) {
  int32_t m = x % n;
  return m < 0 ? m + n : m;
}

}  // namespace tempest::core

#endif  // TEMPEST_COMMON_CORE_JAVA_HASH_H_
