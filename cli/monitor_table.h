#ifndef TEMPEST_CLI_MONITOR_TABLE_H_
#define TEMPEST_CLI_MONITOR_TABLE_H_

// The arithmetic and the text of `tempest monitor` (Storm's `monitor`): the
// counts it reads from nimbus's component page, the deltas and rates
// between two polls, and the fixed-width lines it prints. No I/O and no
// clock (callers pass the times in); safe from any thread.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "nlohmann/json.hpp"

namespace tempest::cli {

// The count `tempest monitor` follows (Storm's -w/--watch).
enum class MonitorWatch { kEmitted, kTransferred };

// "emitted" or "transferred"; nullopt for anything else.
std::optional<MonitorWatch> ParseMonitorWatch(std::string_view text);
std::string_view MonitorWatchName(MonitorWatch watch);

// All-time counts of one component's output stream at one poll.
struct MonitorSample {
  int64_t watched = 0;  // emitted or transferred on the stream
  int64_t acked = 0;
  int64_t failed = 0;
};

// /api/v1/topology/ID/component/COMPONENT?window=:all-time, both ids
// percent-encoded (all but letters, digits and - . _ ~).
std::string ComponentPagePath(std::string_view topology_id, std::string_view component);

// The sample in a component page (GET /api/v1/topology/:id/component/:c).
// The watched count is the `outputStats` row of `stream`. Acked and failed:
// for a spout, the same row's (the tuple trees rooted on the stream); for a
// bolt, the sums over its `inputStats` rows (the input tuples it acked or
// failed, from every input stream), since a bolt acks what it receives.
// A component that has emitted nothing yet has no output rows: all zeros.
// NotFound when it has rows but none for `stream` (the message lists the
// streams it emits on); FailedPrecondition when the page has no
// `outputStats` at all (a nimbus without per-stream counts); DataLoss for a
// page that is not an object.
absl::StatusOr<MonitorSample> MonitorSampleFromPage(const nlohmann::json& page,
                                                    std::string_view component,
                                                    std::string_view stream, MonitorWatch watch);

// What happened between two polls.
struct MonitorInterval {
  int64_t elapsed_ms = 0;
  // A count went down: the counters started over (executors moved to other
  // workers), so this interval has no delta nor rates.
  bool restarted = false;
  int64_t delta = 0;  // of the watched count
  double rate = 0;    // per second
  double acked_rate = 0;
  double failed_rate = 0;
};

// The interval from `before` to `after`, `elapsed` apart (rates are 0 when
// elapsed is not positive).
MonitorInterval ComputeMonitorInterval(const MonitorSample& before, const MonitorSample& after,
                                       absl::Duration elapsed);

// What the title line names.
struct MonitorTarget {
  std::string topology;
  std::string component;
  std::string component_type;  // "spout" or "bolt"
  int executors = 0;
  std::string stream;
  MonitorWatch watch = MonitorWatch::kEmitted;
  int interval_secs = 0;
};

// The line before the header, e.g. "topology demo, bolt sink (2 executors),
// stream default: emitted every 4 s".
std::string MonitorTitle(const MonitorTarget& target);

// The header row, e.g.
// "    time  time-diff ms       emitted     emitted/s       acked/s      failed/s".
// Columns are right-aligned and of fixed width, so rows printed one at a
// time line up under it.
std::string MonitorHeader(MonitorWatch watch);

// One row under MonitorHeader: the wall time `at` as HH:MM:SS in `tz`, the
// elapsed milliseconds, the delta and the three rates (one decimal); a
// restarted interval shows "-" for them and ends with "(counts restarted)".
std::string MonitorRow(const MonitorInterval& interval, absl::Time at, absl::TimeZone tz);

}  // namespace tempest::cli

#endif  // TEMPEST_CLI_MONITOR_TABLE_H_
