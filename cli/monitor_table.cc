#include "cli/monitor_table.h"

#include <algorithm>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "cli/cli_text.h"
#include "common/api/string_view_compat.h"
#include "common/core/log_text.h"

namespace tempest::cli {
namespace {

using api::Sv;
using json = nlohmann::json;

// Widths of the columns after the time (HH:MM:SS, 8 wide); two blanks
// separate columns. Wide enough for a million tuples a second over an hour.
constexpr int kTimeWidth = 8;
constexpr int kColumnWidth = 12;

std::string PercentEncode(std::string_view text) {
  std::string out;
  for (const char c : text) {
    const auto u = static_cast<unsigned char>(c);
    if (absl::ascii_isalnum(u) || c == '-' || c == '.' || c == '_' || c == '~') {
      out.push_back(c);
    } else {
      absl::StrAppendFormat(&out, "%%%02X", u);
    }
  }
  return out;
}

// A count as nimbus writes it: a JSON integer (a string of digits is taken
// too, as Storm UI clients send some counts that way); 0 when absent or not
// a count.
int64_t Count(const json& row, const char* field) {
  auto it = row.find(field);
  if (it == row.end()) return 0;
  if (it->is_number_integer()) return it->get<int64_t>();
  if (it->is_number_unsigned()) return static_cast<int64_t>(it->get<uint64_t>());
  int64_t n = 0;
  if (it->is_string() && absl::SimpleAtoi(it->get<std::string>(), &n)) return n;
  return 0;
}

// A string field; "" when absent or not a string (never throws).
std::string Text(const json& object, const char* field) {
  auto it = object.find(field);
  return it != object.end() && it->is_string() ? it->get<std::string>() : std::string();
}

double PerSecond(int64_t delta, double secs) { return secs > 0 ? delta / secs : 0.0; }

std::string Cell(std::string_view text, int width) {
  return absl::StrFormat("%*s", width, Sv(text));
}

std::string Rate(double per_second) { return absl::StrFormat("%.1f", per_second); }

}  // namespace

std::optional<MonitorWatch> ParseMonitorWatch(std::string_view text) {
  if (text == "emitted") return MonitorWatch::kEmitted;
  if (text == "transferred") return MonitorWatch::kTransferred;
  return std::nullopt;
}

std::string_view MonitorWatchName(MonitorWatch watch) {
  return watch == MonitorWatch::kEmitted ? "emitted" : "transferred";
}

std::string ComponentPagePath(std::string_view topology_id, std::string_view component) {
  return absl::StrCat("/api/v1/topology/", PercentEncode(topology_id), "/component/",
                      PercentEncode(component), "?window=:all-time");
}

absl::StatusOr<MonitorSample> MonitorSampleFromPage(const json& page, std::string_view component,
                                                    std::string_view stream, MonitorWatch watch) {
  if (!page.is_object()) {
    return absl::DataLossError(absl::StrCat("nimbus sent a component page for '", Sv(component),
                                            "' that is not an object"));
  }
  auto outputs = page.find("outputStats");
  if (outputs == page.end() || !outputs->is_array()) {
    return absl::FailedPreconditionError(
        "nimbus does not report per-stream counts (its component page has no outputStats); "
        "monitor needs a nimbus of this version");
  }
  const bool spout = Text(page, "componentType") == "spout";
  const char* field = watch == MonitorWatch::kEmitted ? "emitted" : "transferred";
  MonitorSample sample;
  std::vector<std::string> streams;
  bool found = false;
  for (const json& row : *outputs) {
    if (!row.is_object()) continue;
    const std::string name = Text(row, "stream");
    if (std::find(streams.begin(), streams.end(), name) == streams.end()) streams.push_back(name);
    if (name != stream) continue;
    found = true;
    // Executors of one component report one row per stream; should nimbus
    // ever list a stream twice, both count.
    sample.watched += Count(row, field);
    if (spout) {
      sample.acked += Count(row, "acked");
      sample.failed += Count(row, "failed");
    }
  }
  if (!found && !streams.empty()) {
    return absl::NotFoundError(
        absl::StrCat("component '", Sv(component), "' has no output stream '", Sv(stream),
                     "'; it emits on: ", absl::StrJoin(streams, ", "), " (-s STREAM)"));
  }
  if (!spout) {
    auto inputs = page.find("inputStats");
    if (inputs != page.end() && inputs->is_array()) {
      for (const json& row : *inputs) {
        if (!row.is_object()) continue;
        sample.acked += Count(row, "acked");
        sample.failed += Count(row, "failed");
      }
    }
  }
  return sample;
}

MonitorInterval ComputeMonitorInterval(const MonitorSample& before, const MonitorSample& after,
                                       absl::Duration elapsed) {
  MonitorInterval out;
  out.elapsed_ms = absl::ToInt64Milliseconds(elapsed);
  if (after.watched < before.watched || after.acked < before.acked ||
      after.failed < before.failed) {
    out.restarted = true;
    return out;
  }
  const double secs = absl::ToDoubleSeconds(elapsed);
  out.delta = after.watched - before.watched;
  out.rate = PerSecond(out.delta, secs);
  out.acked_rate = PerSecond(after.acked - before.acked, secs);
  out.failed_rate = PerSecond(after.failed - before.failed, secs);
  return out;
}

std::string MonitorTitle(const MonitorTarget& t) {
  // Names come from nimbus: printed escaped (cli_text.h).
  return absl::StrCat("topology ", Printable(t.topology), ", ", Printable(t.component_type), " ",
                      Printable(t.component), " (",
                      core::Counted(t.executors, "executor"), "), stream ",
                      Printable(t.stream), ": ", Sv(MonitorWatchName(t.watch)), " every ",
                      t.interval_secs, " s");
}

std::string MonitorHeader(MonitorWatch watch) {
  const std::string_view name = MonitorWatchName(watch);
  return absl::StrCat(Cell("time", kTimeWidth), "  ", Cell("time-diff ms", kColumnWidth), "  ",
                      Cell(name, kColumnWidth), "  ",
                      Cell(absl::StrCat(Sv(name), "/s"), kColumnWidth), "  ",
                      Cell("acked/s", kColumnWidth), "  ", Cell("failed/s", kColumnWidth));
}

std::string MonitorRow(const MonitorInterval& interval, absl::Time at, absl::TimeZone tz) {
  std::string row = absl::StrCat(Cell(absl::FormatTime("%H:%M:%S", at, tz), kTimeWidth), "  ",
                                 Cell(absl::StrCat(interval.elapsed_ms), kColumnWidth));
  if (interval.restarted) {
    for (int i = 0; i < 4; ++i) absl::StrAppend(&row, "  ", Cell("-", kColumnWidth));
    absl::StrAppend(&row, "  (counts restarted)");
    return row;
  }
  absl::StrAppend(&row, "  ", Cell(absl::StrCat(interval.delta), kColumnWidth), "  ",
                  Cell(Rate(interval.rate), kColumnWidth), "  ",
                  Cell(Rate(interval.acked_rate), kColumnWidth), "  ",
                  Cell(Rate(interval.failed_rate), kColumnWidth));
  return row;
}

}  // namespace tempest::cli
