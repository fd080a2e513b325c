#include "cli/cli_text.h"

#include <algorithm>
#include <cmath>
#include <string_view>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/strip.h"
#include "nlohmann/json.hpp"

namespace tempest::cli {

std::string FormatNumber(double value) {
  if (std::isfinite(value) && value == std::floor(value) && std::fabs(value) <= 1e18) {
    return absl::StrCat(static_cast<int64_t>(value));
  }
  return absl::StrFormat("%.6g", value);
}

std::string RangeMessage(double min, double max, const std::string& text) {
  return absl::StrCat("must be between ", FormatNumber(min), " and ", FormatNumber(max),
                      " (got ", text, ")");
}

CLI::Validator Bounded(double min, double max) {
  CLI::Validator v(
      [min, max](std::string& input) -> std::string {
        double value = 0;
        const absl::string_view text = absl::StripAsciiWhitespace(input);
        if (!absl::SimpleAtod(text, &value) || !std::isfinite(value) || value < min ||
            value > max) {
          return RangeMessage(min, max, input);
        }
        return std::string();
      },
      absl::StrCat("in [", FormatNumber(min), "..", FormatNumber(max), "]"));
  return v;
}

std::string Printable(std::string_view text) {
  constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    const auto next = i + 1 < text.size() ? static_cast<unsigned char>(text[i + 1]) : 0;
    if (c == 0xc2 && next >= 0x80 && next <= 0x9f) {
      out += "\\u00";
      out += kHex[next >> 4];
      out += kHex[next & 0xf];
      ++i;
    } else if (c < 0x20 || c == 0x7f) {
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 0xf];
    } else {
      out += static_cast<char>(c);
    }
  }
  return out;
}

std::string FormatTable(const std::vector<std::string>& raw_header,
                        const std::vector<std::vector<std::string>>& raw_rows) {
  auto printable = [](const std::vector<std::string>& cells) {
    std::vector<std::string> out;
    out.reserve(cells.size());
    for (const std::string& cell : cells) out.push_back(Printable(cell));
    return out;
  };
  const std::vector<std::string> header = printable(raw_header);
  std::vector<std::vector<std::string>> rows;
  rows.reserve(raw_rows.size());
  for (const auto& row : raw_rows) rows.push_back(printable(row));
  const size_t columns = header.size();
  std::vector<size_t> width(columns, 0);
  for (size_t c = 0; c < columns; ++c) width[c] = header[c].size();
  for (const auto& row : rows) {
    for (size_t c = 0; c < columns && c < row.size(); ++c) width[c] = std::max(width[c], row[c].size());
  }
  auto line = [&](const std::vector<std::string>& cells) {
    std::string out;
    for (size_t c = 0; c < columns; ++c) {
      const std::string cell = c < cells.size() ? cells[c] : std::string();
      if (c + 1 == columns) {
        out += cell;
      } else {
        out += cell;
        out.append(width[c] - cell.size() + 2, ' ');
      }
    }
    // A short last cell leaves no trailing blanks.
    while (!out.empty() && out.back() == ' ') out.pop_back();
    out += '\n';
    return out;
  };
  std::string out = line(header);
  size_t total = 0;
  for (size_t c = 0; c < columns; ++c) total += width[c] + (c + 1 < columns ? 2 : 0);
  out.append(total, '-');
  out += '\n';
  for (const auto& row : rows) out += line(row);
  return out;
}

std::string ShellWord(const std::string& text) {
  const bool plain =
      !text.empty() && std::all_of(text.begin(), text.end(), [](char c) {
        return absl::ascii_isalnum(static_cast<unsigned char>(c)) ||
               std::string_view("_./:,@%+=-").find(c) != std::string_view::npos;
      });
  if (plain) return text;
  std::string out = "'";
  for (char c : text) {
    if (c == '\'') {
      out += "'\\''";
    } else {
      out += c;
    }
  }
  return out + "'";
}

std::vector<std::string> DevExportLines(const std::string& nimbus, const std::string& bootstrap,
                                        const std::string& zookeeper,
                                        const std::string& token_file,
                                        const std::string& zk_auth_file) {
  std::vector<std::string> lines = {absl::StrCat("export TEMPEST_NIMBUS=", nimbus),
                                    absl::StrCat("export BOOTSTRAP=", bootstrap),
                                    absl::StrCat("export TEMPEST_ZK=", zookeeper)};
  if (!token_file.empty()) {
    lines.push_back(absl::StrCat("export TEMPEST_TOKEN_FILE=", ShellWord(token_file)));
  }
  if (!zk_auth_file.empty()) {
    lines.push_back(absl::StrCat("export TEMPEST_ZK_AUTH_FILE=", ShellWord(zk_auth_file)));
  }
  return lines;
}

std::string DevUiUrl(const std::string& nimbus, const std::string& token) {
  const size_t colon = nimbus.rfind(':');
  std::string host = colon == std::string::npos ? nimbus : nimbus.substr(0, colon);
  const std::string port = colon == std::string::npos ? "" : nimbus.substr(colon);
  if (host.empty() || host == "0.0.0.0" || host == "::" || host == "[::]") host = "127.0.0.1";
  if (host.find(':') != std::string::npos && host.front() != '[') host = "[" + host + "]";
  std::string url = absl::StrCat("http://", host, port, "/");
  if (token.empty()) return url;
  url += "#token=";
  for (const char c : token) {
    const auto u = static_cast<unsigned char>(c);
    if (absl::ascii_isalnum(u) || c == '-' || c == '.' || c == '_' || c == '~') {
      url += c;
    } else {
      url += absl::StrFormat("%%%02X", u);
    }
  }
  return url;
}

std::string RunningWaitReason(const RunningProgress& p) {
  if (p.supervisors == 0) return "no supervisor is registered; waiting";
  if (p.workers_assigned == 0) {
    if (p.slots_free == 0) {
      return absl::StrCat("0 free slots of ", std::max(p.slots_total, 0), "; waiting");
    }
    if (p.slots_free > 0) {
      return absl::StrCat("not scheduled yet (", p.slots_free, " free slots of ", p.slots_total,
                          "); waiting");
    }
    return "not scheduled yet; waiting";
  }
  if (p.executors_total == 0) return "nimbus has not laid the topology out yet; waiting";
  return absl::StrCat(p.executors_running, "/", p.executors_total, " executors running in ",
                      p.workers_beating, p.workers_beating == 1 ? " worker" : " workers",
                      "; waiting");
}

absl::StatusOr<std::vector<std::string>> StormRebalanceOverrideNotes(
    const std::string& resources, const std::string& topology_conf) {
  std::vector<std::string> notes;
  const struct {
    const char* flag;
    const std::string& value;
    const char* note;
  } given[] = {
      {"-r", resources,
       "-r (component resources) accepted but not applied: Tempest schedules by worker slots, "
       "not by CPU or memory"},
      {"-t", topology_conf,
       "-t (topology config overrides) accepted but not applied: a running topology keeps its "
       "config; resubmit it with -c key=value to change it"},
  };
  for (const auto& g : given) {
    if (g.value.empty()) continue;
    const nlohmann::json parsed = nlohmann::json::parse(g.value, nullptr, false);
    if (parsed.is_discarded() || !parsed.is_object()) {
      return absl::InvalidArgumentError(
          absl::StrCat(g.flag, " expects a JSON object such as '{\"component\": {...}}', not '",
                       g.value.substr(0, 80), "'"));
    }
    notes.push_back(g.note);
  }
  return notes;
}

namespace {

size_t EditDistance(const std::string& a, const std::string& b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t up = row[j];
      const bool same = a[i - 1] == b[j - 1] ||
                        ((a[i - 1] == '_' || a[i - 1] == '-') && (b[j - 1] == '_' || b[j - 1] == '-'));
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (same ? 0 : 1)});
      diagonal = up;
    }
  }
  return row[b.size()];
}

}  // namespace

std::string ClosestName(const std::string& word, const std::vector<std::string>& names) {
  const size_t limit = std::max<size_t>(2, word.size() / 2);
  std::string best;
  size_t best_distance = limit + 1;
  for (const std::string& name : names) {
    const size_t d = EditDistance(word, name);
    if (d < best_distance) {
      best = name;
      best_distance = d;
    }
  }
  return best;
}

std::string UnknownCommandMessage(const std::string& word, const std::vector<std::string>& names) {
  const std::string closest = ClosestName(word, names);
  if (closest.empty()) return absl::StrCat("unknown command '", word, "' (tempest --help)");
  return absl::StrCat("unknown command '", word, "'; did you mean '", closest,
                      "'? (tempest --help)");
}

}  // namespace tempest::cli
