#include "common/core/grouping/java_hash.h"

#include <bit>
#include <cmath>

namespace tempest::core {
namespace {

// 32-bit arithmetic with Java's wrap-around semantics.
inline uint32_t Mul31Add(uint32_t h, uint32_t x) { return h * 31u + x; }

// Decodes one UTF-8 code point starting at s[i]; advances i. Malformed
// input yields U+FFFD and consumes one byte.
uint32_t DecodeUtf8(std::string_view s, size_t& i) {
  const auto b0 = static_cast<unsigned char>(s[i]);
  if (b0 < 0x80) {
    ++i;
    return b0;
  }
  int len;
  uint32_t cp;
  if ((b0 & 0xE0) == 0xC0) {
    len = 2;
    cp = b0 & 0x1F;
  } else if ((b0 & 0xF0) == 0xE0) {
    len = 3;
    cp = b0 & 0x0F;
  } else if ((b0 & 0xF8) == 0xF0) {
    len = 4;
    cp = b0 & 0x07;
  } else {
    ++i;
    return 0xFFFD;
  }
  if (i + len > s.size()) {
    ++i;
    return 0xFFFD;
  }
  for (int k = 1; k < len; ++k) {
    const auto b = static_cast<unsigned char>(s[i + k]);
    if ((b & 0xC0) != 0x80) {
      ++i;
      return 0xFFFD;
    }
    cp = (cp << 6) | (b & 0x3F);
  }
  static constexpr uint32_t kMin[] = {0, 0, 0x80, 0x800, 0x10000};
  if (cp < kMin[len] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) {
    ++i;
    return 0xFFFD;
  }
  i += len;
  return cp;
}

}  // namespace

int32_t JavaStringHashCode(std::string_view utf8) {
  uint32_t h = 0;
  size_t i = 0;
  while (i < utf8.size()) {
    uint32_t cp = DecodeUtf8(utf8, i);
    if (cp >= 0x10000) {
      cp -= 0x10000;
      h = Mul31Add(h, 0xD800 + (cp >> 10));
      h = Mul31Add(h, 0xDC00 + (cp & 0x3FF));
    } else {
      h = Mul31Add(h, cp);
    }
  }
  return static_cast<int32_t>(h);
}

int32_t JavaDoubleHashCode(double v) {
  // Double.doubleToLongBits: every NaN collapses to the canonical one.
  uint64_t bits = std::isnan(v) ? 0x7ff8000000000000ULL : std::bit_cast<uint64_t>(v);
  return static_cast<int32_t>(bits ^ (bits >> 32));
}

int32_t JavaBytesHashCode(std::string_view bytes) {
  uint32_t h = 1;
  for (char c : bytes)
    h = Mul31Add(h, static_cast<uint32_t>(static_cast<int32_t>(static_cast<signed char>(c))));
  return static_cast<int32_t>(h);
}

int32_t JavaHashCode(const api::Value& v) {
  using Type = api::Value::Type;
  switch (v.type()) {
    case Type::kNil:
      return 0;
    case Type::kBool:
      return JavaBooleanHashCode(v.AsBool());
    case Type::kInt:
      return JavaLongHashCode(v.AsInt());
    case Type::kDouble:
      return JavaDoubleHashCode(v.AsDouble());
    case Type::kString:
      return JavaStringHashCode(v.AsString());
    case Type::kBytes:
      return JavaBytesHashCode(v.AsBytes());
    case Type::kList: {
      // List.hashCode has the same recurrence as Arrays.deepHashCode.
      return JavaDeepHashCode(std::span<const api::Value>(v.AsList()));
    }
    case Type::kMap: {
      // Map.hashCode: sum of (key.hashCode ^ value.hashCode) over entries.
      uint32_t h = 0;
      for (const auto& [k, e] : v.AsMap()) {
        h += static_cast<uint32_t>(JavaStringHashCode(k) ^ JavaHashCode(e));
      }
      return static_cast<int32_t>(h);
    }
  }
  return 0;
}

int32_t JavaDeepHashCode(const api::Values& values, std::span<const int> indices) {
  uint32_t h = 1;
  for (int i : indices) h = Mul31Add(h, static_cast<uint32_t>(JavaHashCode(values[i])));
  return static_cast<int32_t>(h);
}

int32_t JavaDeepHashCode(std::span<const api::Value> values) {
  uint32_t h = 1;
  for (const api::Value& v : values) h = Mul31Add(h, static_cast<uint32_t>(JavaHashCode(v)));
  return static_cast<int32_t>(h);
}

}  // namespace tempest::core
