#include "cli/cli_text.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/strip.h"

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

std::string FormatTable(const std::vector<std::string>& header,
                        const std::vector<std::vector<std::string>>& rows) {
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

std::vector<std::string> DevExportLines(const std::string& nimbus, const std::string& bootstrap,
                                        const std::string& zookeeper) {
  return {absl::StrCat("export TEMPEST_NIMBUS=", nimbus),
          absl::StrCat("export BOOTSTRAP=", bootstrap),
          absl::StrCat("export TEMPEST_ZK=", zookeeper)};
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

}  // namespace tempest::cli
