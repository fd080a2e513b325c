#include "common/core/log_text.h"

#include <cstdint>
#include <cstdio>
#include <string>

namespace tempest::core {
namespace {

// The length of the well-formed UTF-8 sequence at the start of `s` (1-4),
// or 0 when it is not one (overlong forms and surrogates included).
size_t Utf8SequenceLength(std::string_view s) {
  const auto b = [&](size_t i) { return static_cast<uint8_t>(s[i]); };
  const uint8_t lead = b(0);
  size_t len = 0;
  uint8_t low = 0x80, high = 0xBF;  // bounds of the second byte
  if (lead >= 0xC2 && lead <= 0xDF) {
    len = 2;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    len = 3;
    if (lead == 0xE0) low = 0xA0;
    if (lead == 0xED) high = 0x9F;
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    len = 4;
    if (lead == 0xF0) low = 0x90;
    if (lead == 0xF4) high = 0x8F;
  } else {
    return 0;
  }
  if (s.size() < len || b(1) < low || b(1) > high) return 0;
  for (size_t i = 2; i < len; ++i) {
    if (b(i) < 0x80 || b(i) > 0xBF) return 0;
  }
  return len;
}

// The code point a well-formed 2- or 3-byte sequence encodes, when it is one
// that must be escaped (C1 controls, U+2028, U+2029); else 0.
uint32_t EscapedCodePoint(std::string_view seq) {
  const auto b = [&](size_t i) { return static_cast<uint32_t>(static_cast<uint8_t>(seq[i])); };
  if (seq.size() == 2 && b(0) == 0xC2 && b(1) <= 0x9F) return b(1);
  if (seq.size() == 3 && b(0) == 0xE2 && b(1) == 0x80 && (b(2) == 0xA8 || b(2) == 0xA9)) {
    return 0x2000 | ((b(1) & 0x3F) << 6) | (b(2) & 0x3F);
  }
  return 0;
}

}  // namespace

bool LogTextNeedsEscaping(std::string_view text) {
  for (size_t i = 0; i < text.size();) {
    const uint8_t c = static_cast<uint8_t>(text[i]);
    if (c < 0x20 || c == 0x7F) return true;
    if (c < 0x80) {
      ++i;
      continue;
    }
    const size_t len = Utf8SequenceLength(text.substr(i));
    if (len == 0 || EscapedCodePoint(text.substr(i, len)) != 0) return true;
    i += len;
  }
  return false;
}

std::string EscapeLogText(std::string_view text) {
  if (!LogTextNeedsEscaping(text)) return std::string(text);
  std::string out;
  out.reserve(text.size() + 16);
  char buf[8];
  for (size_t i = 0; i < text.size();) {
    const uint8_t c = static_cast<uint8_t>(text[i]);
    if (c >= 0x20 && c < 0x7F) {
      out += static_cast<char>(c);
      ++i;
      continue;
    }
    if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c < 0x80) {
      std::snprintf(buf, sizeof(buf), "\\x%02x", c);
      out += buf;
    } else {
      const size_t len = Utf8SequenceLength(text.substr(i));
      if (len == 0) {
        std::snprintf(buf, sizeof(buf), "\\x%02x", c);
        out += buf;
      } else if (const uint32_t cp = EscapedCodePoint(text.substr(i, len)); cp != 0) {
        std::snprintf(buf, sizeof(buf), "\\u%04x", static_cast<unsigned>(cp));
        out += buf;
        i += len;
        continue;
      } else {
        out.append(text.substr(i, len));
        i += len;
        continue;
      }
    }
    ++i;
  }
  return out;
}

std::string Counted(int64_t n, std::string_view singular, std::string_view plural) {
  std::string out = std::to_string(n);
  out += ' ';
  if (n == 1 || n == -1) {
    out.append(singular);
  } else if (!plural.empty()) {
    out.append(plural);
  } else {
    out.append(singular);
    out += 's';
  }
  return out;
}

}  // namespace tempest::core
