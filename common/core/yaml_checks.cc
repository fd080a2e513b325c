#include "common/core/yaml_checks.h"

#include <algorithm>
#include <exception>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "common/api/string_view_compat.h"
#include "common/core/status_macros.h"
#include "yaml-cpp/depthguard.h"

namespace tempest::core {
namespace {

using api::Sv;

absl::Status Error(std::string_view file, int line, std::string_view msg) {
  if (file.empty()) return absl::InvalidArgumentError(absl::StrCat("line ", line, ": ", Sv(msg)));
  return absl::InvalidArgumentError(absl::StrCat(Sv(file), ":", line, ": ", Sv(msg)));
}

int LineAt(std::string_view text, size_t pos) {
  return 1 + static_cast<int>(std::count(text.begin(), text.begin() + std::min(pos, text.size()),
                                         '\n'));
}

// Length of the UTF-8 sequence starting at text[i], or 0 if it is invalid
// (overlong forms, surrogates and code points above U+10FFFF included).
size_t Utf8SequenceLength(std::string_view text, size_t i) {
  const auto b = [&](size_t k) { return static_cast<unsigned char>(text[k]); };
  const unsigned char c = b(i);
  if (c < 0x80) return 1;
  size_t n;
  uint32_t cp;
  if ((c & 0xe0) == 0xc0) {
    n = 2, cp = c & 0x1f;
  } else if ((c & 0xf0) == 0xe0) {
    n = 3, cp = c & 0x0f;
  } else if ((c & 0xf8) == 0xf0) {
    n = 4, cp = c & 0x07;
  } else {
    return 0;
  }
  if (i + n > text.size()) return 0;
  for (size_t k = 1; k < n; ++k) {
    if ((b(i + k) & 0xc0) != 0x80) return 0;
    cp = (cp << 6) | (b(i + k) & 0x3f);
  }
  static constexpr uint32_t kMin[] = {0, 0, 0x80, 0x800, 0x10000};
  if (cp < kMin[n] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return 0;
  return n;
}

absl::Status CheckEncoding(std::string_view text, std::string_view file) {
  const bool bom16 = text.size() >= 2 && ((text[0] == '\xff' && text[1] == '\xfe') ||
                                          (text[0] == '\xfe' && text[1] == '\xff'));
  if (bom16 || (text.size() >= 2 && (text[0] == '\0' || text[1] == '\0'))) {
    return Error(file, 1, "the file is UTF-16 (or another wide encoding); save it as UTF-8");
  }
  for (size_t i = 0; i < text.size();) {
    if (text[i] == '\0') return Error(file, LineAt(text, i), "the file holds a NUL byte");
    const size_t n = Utf8SequenceLength(text, i);
    if (n == 0) {
      return Error(file, LineAt(text, i),
                   absl::StrCat("the file is not valid UTF-8 (byte 0x",
                                absl::BytesToHexString(Sv(text.substr(i, 1))), ")"));
    }
    i += n;
  }
  return absl::OkStatus();
}

// Whether the quoted scalar whose opening quote is at text[pos] is closed
// before the end of the text.
bool QuoteCloses(std::string_view text, size_t pos) {
  const char quote = text[pos];
  for (size_t i = pos + 1; i < text.size(); ++i) {
    if (quote == '"' && text[i] == '\\') {
      ++i;
    } else if (text[i] == quote) {
      if (quote == '\'' && i + 1 < text.size() && text[i + 1] == '\'') {
        ++i;  // '' is an escaped quote
      } else {
        return true;
      }
    }
  }
  return false;
}

// The walk after parsing: depth, expansion, duplicate keys, unclosed quotes.
class DocumentWalk {
 public:
  DocumentWalk(std::string_view text, std::string_view file) : text_(text), file_(file) {}

  absl::Status Run(const YAML::Node& root) {
    std::vector<std::pair<YAML::Node, int>> stack;
    stack.emplace_back(root, 0);
    size_t values = 0;
    while (!stack.empty()) {
      auto [node, depth] = std::move(stack.back());
      stack.pop_back();
      if (++values > kMaxYamlValues) {
        return Error(file_, Line(node),
                     absl::StrCat("the document expands to more than ", kMaxYamlValues,
                                  " values (through aliases?)"));
      }
      if (depth > kMaxYamlDepth) {
        return Error(file_, Line(node),
                     absl::StrCat("the document is nested deeper than ", kMaxYamlDepth, " levels"));
      }
      if (node.IsScalar()) {
        RETURN_IF_ERROR(CheckQuote(node));
      } else if (node.IsSequence()) {
        for (const YAML::Node& e : node) stack.emplace_back(e, depth + 1);
      } else if (node.IsMap()) {
        absl::flat_hash_map<std::string, int> keys;
        for (const auto& kv : node) {
          if (kv.first.IsScalar()) {
            auto [it, inserted] = keys.emplace(kv.first.Scalar(), Line(kv.first));
            if (!inserted) {
              return Error(file_, Line(kv.first),
                           absl::StrCat("duplicate key '", absl::CHexEscape(kv.first.Scalar()),
                                        "' (first at line ", it->second, ")"));
            }
          }
          stack.emplace_back(kv.first, depth + 1);
          stack.emplace_back(kv.second, depth + 1);
        }
      }
    }
    return absl::OkStatus();
  }

 private:
  static int Line(const YAML::Node& n) {
    const YAML::Mark m = n.Mark();
    return m.is_null() ? 0 : m.line + 1;
  }

  absl::Status CheckQuote(const YAML::Node& node) {
    const YAML::Mark m = node.Mark();
    if (m.is_null() || m.pos < 0 || static_cast<size_t>(m.pos) >= text_.size()) {
      return absl::OkStatus();
    }
    const size_t pos = static_cast<size_t>(m.pos);
    if (text_[pos] != '"' && text_[pos] != '\'') return absl::OkStatus();
    if (!checked_quotes_.insert(pos).second || QuoteCloses(text_, pos)) return absl::OkStatus();
    return Error(file_, m.line + 1,
                 absl::StrCat("YAML syntax error: the ", text_[pos] == '"' ? "double" : "single",
                              "-quoted string starting here is never closed"));
  }

  std::string_view text_;
  std::string_view file_;
  absl::flat_hash_set<size_t> checked_quotes_;
};

}  // namespace

absl::StatusOr<YAML::Node> LoadCheckedYaml(std::string_view text, std::string_view file) {
  RETURN_IF_ERROR(CheckEncoding(text, file));
  YAML::Node root;
  try {
    root = YAML::Load(std::string(text));
  } catch (const YAML::DeepRecursion& e) {
    // yaml-cpp's own guard, far past ours; its message is just "bad file".
    return Error(file, e.mark.is_null() ? 0 : e.mark.line + 1,
                 absl::StrCat("the document is nested deeper than ", kMaxYamlDepth, " levels"));
  } catch (const YAML::Exception& e) {
    // yaml-cpp marks errors at end of input one line past the last line.
    int line = e.mark.is_null() ? 0 : e.mark.line + 1;
    int last_line = static_cast<int>(std::count(text.begin(), text.end(), '\n'));
    if (!text.empty() && text.back() != '\n') ++last_line;
    line = std::min(line, std::max(last_line, 1));
    return Error(file, line, absl::StrCat("YAML syntax error: ", e.msg));
  } catch (const std::exception& e) {
    return Error(file, 0, absl::StrCat("YAML error: ", e.what()));
  }
  try {
    RETURN_IF_ERROR(DocumentWalk(text, file).Run(root));
  } catch (const std::exception& e) {
    return Error(file, 0, absl::StrCat("malformed YAML document: ", e.what()));
  }
  return root;
}

}  // namespace tempest::core
