#include "supervisor/worker_exit_record.h"

#include <algorithm>
#include <cctype>

#include "absl/strings/str_format.h"
#include "nlohmann/json.hpp"

namespace tempest::supervisor {
namespace {

bool NamesCredential(std::string_view line) {
  std::string lower(line);
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  for (std::string_view word : {"password", "secret", "token", "payload", "digest"}) {
    if (lower.find(word) != std::string::npos) return true;
  }
  return false;
}

// Length of the valid UTF-8 sequence at `s[i]`, 0 when it is not one.
size_t Utf8Length(std::string_view s, size_t i) {
  const auto c = static_cast<unsigned char>(s[i]);
  size_t n = c >= 0xF0 && c <= 0xF4 ? 4 : c >= 0xE0 ? 3 : c >= 0xC2 && c < 0xE0 ? 2 : 0;
  if (n == 0 || i + n > s.size()) return 0;
  for (size_t k = 1; k < n; ++k) {
    if ((static_cast<unsigned char>(s[i + k]) & 0xC0) != 0x80) return 0;
  }
  return n;
}

// Printable ASCII and valid UTF-8 as they are; everything else as \xNN, so
// a terminal, the UI and JSON all show the bytes without obeying them.
std::string Escape(std::string_view line) {
  std::string out;
  for (size_t i = 0; i < line.size() && out.size() < kExitOutputLineChars;) {
    const auto c = static_cast<unsigned char>(line[i]);
    if (c >= 0x20 && c < 0x7F) {
      out.push_back(static_cast<char>(c));
      ++i;
    } else if (size_t n = c >= 0x80 ? Utf8Length(line, i) : 0; n > 0) {
      out.append(line.substr(i, n));
      i += n;
    } else {
      absl::StrAppendFormat(&out, "\\x%02x", c);
      ++i;
    }
  }
  return out;
}

}  // namespace

std::vector<std::string> OutputTailLines(std::string_view log_tail) {
  std::vector<std::string> lines;
  size_t start = 0;
  while (start < log_tail.size()) {
    size_t end = log_tail.find('\n', start);
    if (end == std::string_view::npos) end = log_tail.size();
    std::string_view line = log_tail.substr(start, end - start);
    start = end + 1;
    while (!line.empty() && std::isspace(static_cast<unsigned char>(line.back()))) {
      line.remove_suffix(1);
    }
    if (line.empty()) continue;
    lines.push_back(NamesCredential(line) ? "(a line naming a credential, left out)"
                                          : Escape(line));
  }
  if (lines.size() > kExitOutputLines) {
    lines.erase(lines.begin(), lines.end() - kExitOutputLines);
  }
  return lines;
}

std::string EncodeWorkerExitRecord(const WorkerExitRecord& r, std::string_view supervisor_id,
                                   std::string_view host) {
  const nlohmann::json doc = {
      {"topologyId", r.topology_id},
      {"supervisorId", supervisor_id},
      {"host", host},
      {"port", r.port},
      {"pid", r.pid},
      {"state", r.running ? "running" : "failing"},
      {"status", r.status.substr(0, kExitOutputLineChars)},
      {"output", r.output},
      {"restarts", r.restarts},
      {"consecutiveFailures", r.consecutive_failures},
      {"exitTimeMs", r.exit_time_ms},
      {"nextAttemptMs", r.next_attempt_ms},
  };
  return doc.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace tempest::supervisor
