// `tempest monitor NAME -m COMPONENT`: Storm's `monitor`. Polls nimbus's
// component page every interval and prints one line per interval with what
// the component's output stream did since the previous poll (the delta of
// the watched count and its rate, plus the acked and failed rates), until
// SIGINT/SIGTERM or --count lines. The arithmetic and the text live in
// cli/monitor_table (unit-tested); this file only talks to nimbus.

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "cli/cli_text.h"
#include "cli/commands.h"
#include "cli/monitor_table.h"
#include "cli/nimbus_client.h"

namespace tempest::cli {
namespace {

using json = nlohmann::json;

struct MonitorOptions {
  std::string name;
  std::string component;
  std::string stream = "default";
  std::string watch = "emitted";
  int interval_secs = 4;
  int64_t count = 0;  // lines to print; 0: until stopped
};

// The longest poll interval: one day.
constexpr int kMaxIntervalSecs = 24 * 3600;
constexpr int64_t kMaxCount = 1000000000;

// Component ids and kinds of the topology page ("spouts", "bolts").
struct ComponentInfo {
  std::string id;
  std::string type;
};

std::vector<ComponentInfo> ComponentsOf(const json& topology) {
  std::vector<ComponentInfo> out;
  for (const auto& [list, key, type] :
       {std::tuple{"spouts", "spoutId", "spout"}, std::tuple{"bolts", "boltId", "bolt"}}) {
    auto it = topology.find(list);
    if (it == topology.end() || !it->is_array()) continue;
    for (const json& c : *it) {
      if (!c.is_object()) continue;
      auto id = c.find(key);
      if (id != c.end() && id->is_string()) out.push_back({id->get<std::string>(), type});
    }
  }
  return out;
}

std::string Names(const std::vector<ComponentInfo>& components) {
  std::vector<std::string> names;
  for (const ComponentInfo& c : components) names.push_back(c.id);
  return names.empty() ? std::string("none") : absl::StrJoin(names, ", ");
}

// The component named by -m, or the exit code after saying why there is
// none (no -m: the components are listed, as Storm's monitor does).
int FindComponent(const MonitorOptions& opts, const std::vector<ComponentInfo>& components,
                  const ComponentInfo** target) {
  if (opts.component.empty()) {
    // Storm's monitor lists the components when none is given.
    return Fail(absl::StrCat("monitor needs -m COMPONENT; the components of '", opts.name,
                             "' are: ", Names(components)),
                2);
  }
  for (const ComponentInfo& c : components) {
    if (c.id == opts.component) *target = &c;
  }
  if (*target != nullptr) return 0;
  std::vector<std::string> names;
  for (const ComponentInfo& c : components) names.push_back(c.id);
  const std::string closest = ClosestName(opts.component, names);
  return Fail(absl::StrCat("topology '", opts.name, "' has no component '", opts.component, "'",
                           closest.empty() ? "" : absl::StrCat("; did you mean '", closest, "'?"),
                           " (its components: ", Names(components), ")"));
}

// One poll of the component page: the sample, and the page it came from.
struct ComponentPoller {
  const NimbusClient& client;
  const MonitorOptions& opts;
  std::string id;  // the topology's
  MonitorWatch watch;

  absl::StatusOr<MonitorSample> Poll(json* page) const {
    absl::StatusOr<json> got = client.Get(ComponentPagePath(id, opts.component));
    if (!got.ok()) {
      if (absl::IsNotFound(got.status())) {
        return absl::NotFoundError(
            absl::StrCat("topology '", opts.name, "' (", id, ") is no longer on nimbus"));
      }
      return got.status();
    }
    if (page != nullptr) *page = *got;
    return MonitorSampleFromPage(*got, opts.component, opts.stream, watch);
  }
};

// The title line's facts: the options, the component's kind, and its
// executor count from the first page.
MonitorTarget TitleOf(const MonitorOptions& opts, const ComponentInfo& component, const json& page,
                      MonitorWatch watch) {
  MonitorTarget title;
  title.topology = opts.name;
  title.component = opts.component;
  title.component_type = component.type;
  if (auto executors = page.find("executors");
      executors != page.end() && executors->is_number_integer()) {
    title.executors = executors->get<int>();
  }
  title.stream = opts.stream;
  title.watch = watch;
  title.interval_secs = opts.interval_secs;
  return title;
}

// One line per interval after the first poll (`previous`, made at
// `previous_at`) until a stop signal or --count lines.
int PrintIntervals(const ComponentPoller& poller, MonitorSample previous,
                   std::chrono::steady_clock::time_point previous_at) {
  const MonitorOptions& opts = poller.opts;
  // Polls keep to a fixed schedule from the first one, so a slow answer
  // does not shift every later line.
  const auto interval = std::chrono::seconds(opts.interval_secs);
  auto next = previous_at + interval;
  const absl::TimeZone local = absl::LocalTimeZone();
  for (int64_t lines = 0; opts.count == 0 || lines < opts.count;) {
    const auto wait = std::chrono::duration_cast<std::chrono::milliseconds>(
        next - std::chrono::steady_clock::now());
    if (WaitStopSignalFor(std::max(wait, std::chrono::milliseconds(0))) != 0) return 0;
    next += interval;
    absl::StatusOr<MonitorSample> sample = poller.Poll(nullptr);
    if (!sample.ok()) return Fail(std::string(sample.status().message()));
    const auto at = std::chrono::steady_clock::now();
    const MonitorInterval row =
        ComputeMonitorInterval(previous, *sample, absl::FromChrono(at - previous_at));
    std::printf("%s\n", MonitorRow(row, absl::Now(), local).c_str());
    std::fflush(stdout);
    previous = *std::move(sample);
    previous_at = at;
    ++lines;
  }
  return 0;
}

int RunMonitor(const MonitorOptions& opts, const GlobalOptions& globals) {
  // Before anything else, so Ctrl-C is seen by the wait between polls (and
  // ends the command cleanly there) rather than killing it mid-line.
  BlockStopSignals();
  const MonitorWatch watch = *ParseMonitorWatch(opts.watch);  // checked by CLI11
  absl::StatusOr<NimbusClient> client = NimbusClient::FromGlobals(globals);
  if (!client.ok()) return Fail(std::string(client.status().message()), 2);
  absl::StatusOr<std::string> id = client->IdOf(opts.name);
  if (!id.ok()) return Fail(std::string(id.status().message()));
  absl::StatusOr<json> topology = client->Get(absl::StrCat("/api/v1/topology/", *id));
  if (!topology.ok()) return Fail(std::string(topology.status().message()));
  const std::vector<ComponentInfo> components = ComponentsOf(*topology);
  const ComponentInfo* target = nullptr;
  if (int rc = FindComponent(opts, components, &target); rc != 0) return rc;

  const ComponentPoller poller{*client, opts, *id, watch};
  json page;
  absl::StatusOr<MonitorSample> first = poller.Poll(&page);
  if (!first.ok()) return Fail(std::string(first.status().message()));
  const auto first_at = std::chrono::steady_clock::now();
  std::printf("%s\n%s\n", MonitorTitle(TitleOf(opts, *target, page, watch)).c_str(),
              MonitorHeader(watch).c_str());
  std::fflush(stdout);
  return PrintIntervals(poller, *std::move(first), first_at);
}

}  // namespace

void RegisterMonitorCommand(CLI::App& app, CommandSet& set, GlobalOptions& globals) {
  auto opts = std::make_shared<MonitorOptions>();
  CLI::App* monitor = app.add_subcommand(
      "monitor",
      "Print a component's throughput on one output stream every interval (Storm's monitor): "
      "the delta of the watched count, its rate, and the acked and failed rates");
  monitor->add_option("name", opts->name, "topology name")->required();
  monitor
      ->add_option("-m,--component", opts->component,
                   "component id (without it, the components are listed)")
      ->default_str("");
  monitor->add_option("-s,--stream", opts->stream, "output stream of the component");
  monitor->add_option("-w,--watch", opts->watch, "count to follow: emitted or transferred")
      ->check(CLI::IsMember({"emitted", "transferred"}));
  monitor->add_option("-i,--interval", opts->interval_secs, "seconds between lines")
      ->check(Bounded(1, kMaxIntervalSecs));
  monitor->add_option("--count", opts->count, "stop after this many lines (default: until Ctrl-C)")
      ->check(Bounded(1, kMaxCount))
      ->default_str("");
  set.Add(monitor, [opts, &globals] { return RunMonitor(*opts, globals); });
}

}  // namespace tempest::cli
