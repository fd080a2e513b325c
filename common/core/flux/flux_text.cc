#include "common/core/flux/flux_text.h"

#include <cstdlib>
#include <fstream>
#include <optional>
#include <sstream>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "common/api/string_view_compat.h"

namespace tempest::core::flux_internal {
namespace {

int LineAt(std::string_view text, size_t pos) {
  int line = 1;
  for (size_t i = 0; i < pos && i < text.size(); ++i) {
    if (text[i] == '\n') ++line;
  }
  return line;
}

// The value of placeholder `key` (${key}): an ENV-NAME from the environment
// (`env`, or the process's when null) once --env-filter is given, any other
// key from the --filter properties; nullopt when it has none.
std::optional<std::string> Lookup(const std::string& key,
                                  const std::map<std::string, std::string>* props, bool env_filter,
                                  const std::map<std::string, std::string>* env) {
  if (key.starts_with("ENV-")) {
    if (!env_filter) return std::nullopt;
    const std::string name = key.substr(4);
    if (env != nullptr) {
      auto it = env->find(name);
      if (it != env->end()) return it->second;
    } else if (const char* v = std::getenv(name.c_str())) {
      return v;
    }
    return std::nullopt;
  }
  if (props == nullptr) return std::nullopt;
  auto it = props->find(key);
  if (it == props->end()) return std::nullopt;
  return it->second;
}

// Why placeholder `key` has no value, for the error.
std::string_view UnresolvedHint(const std::string& key,
                                const std::map<std::string, std::string>* props, bool env_filter) {
  if (key.starts_with("ENV-") && !env_filter) {
    return " (environment substitution needs --env-filter)";
  }
  if (key.starts_with("ENV-")) return " (environment variable not set)";
  if (props == nullptr) return " (no --filter properties file given)";
  return " (no such key in the --filter properties file)";
}

}  // namespace

absl::StatusOr<std::string> ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat(path, ": cannot read file"));
  std::stringstream buf;
  buf << in.rdbuf();
  return buf.str();
}

std::map<std::string, std::string> ParsePropertiesText(std::string_view text) {
  std::map<std::string, std::string> out;
  std::istringstream in{std::string(text)};
  std::string line, logical;
  while (std::getline(in, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    std::string_view trimmed = api::StdSv(absl::StripLeadingAsciiWhitespace(line));
    if (logical.empty() && (trimmed.empty() || trimmed[0] == '#' || trimmed[0] == '!')) continue;
    // A line ending in an odd number of backslashes continues.
    size_t slashes = 0;
    while (slashes < trimmed.size() && trimmed[trimmed.size() - 1 - slashes] == '\\') ++slashes;
    if (slashes % 2 == 1) {
      logical.append(trimmed.substr(0, trimmed.size() - 1));
      continue;
    }
    logical.append(trimmed);
    size_t sep = logical.find_first_of("=: \t");
    std::string key = logical.substr(0, sep);
    std::string value;
    if (sep != std::string::npos) {
      size_t v = logical.find_first_not_of(" \t", sep);
      if (v != std::string::npos && (logical[v] == '=' || logical[v] == ':') &&
          logical[sep] != '=' && logical[sep] != ':') {
        ++v;
      } else if (v != std::string::npos && v == sep) {
        ++v;
      }
      if (v != std::string::npos) v = logical.find_first_not_of(" \t", v);
      if (v != std::string::npos) value = logical.substr(v);
    }
    out[key] = value;
    logical.clear();
  }
  return out;
}


// Replaces ${key} / ${ENV-NAME}; reports unresolved placeholders when a
// filter is active. Lines that are YAML comments are left alone.
std::string Substitute(std::string_view text, const std::string& file,
                       const std::map<std::string, std::string>* props, bool env_filter,
                       const std::map<std::string, std::string>* env, Diagnostics& diag) {
  const bool active = props != nullptr || env_filter;
  std::string out;
  out.reserve(text.size());
  size_t i = 0;
  bool line_is_comment = false;
  bool at_line_start = true;
  while (i < text.size()) {
    char c = text[i];
    if (at_line_start && c != ' ' && c != '\t') {
      line_is_comment = c == '#';
      at_line_start = false;
    }
    if (c == '\n') {
      at_line_start = true;
      line_is_comment = false;
    }
    if (!active || line_is_comment || c != '$' || i + 1 >= text.size() || text[i + 1] != '{') {
      out.push_back(c);
      ++i;
      continue;
    }
    size_t close = text.find('}', i + 2);
    size_t newline = text.find('\n', i + 2);
    if (close == std::string_view::npos || (newline != std::string_view::npos && newline < close)) {
      out.push_back(c);
      ++i;
      continue;
    }
    const std::string key(text.substr(i + 2, close - i - 2));
    const std::optional<std::string> replacement = Lookup(key, props, env_filter, env);
    if (!replacement) {
      diag.Error(
          SourceLocation{file, LineAt(text, i)},
          absl::StrCat("unresolved ${", key, "}", api::Sv(UnresolvedHint(key, props, env_filter))));
      out.append(text.substr(i, close - i + 1));
    } else {
      out.append(*replacement);
    }
    i = close + 1;
  }
  return out;
}

}  // namespace tempest::core::flux_internal
