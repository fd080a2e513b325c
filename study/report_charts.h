#ifndef TEMPEST_STUDY_REPORT_CHARTS_H_
#define TEMPEST_STUDY_REPORT_CHARTS_H_

#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "study/study_results.h"

namespace tempest::study {

// One chart: its gnuplot script and data files (relative to plot/), and the
// PNG the script writes (relative to the report directory).
struct Chart {
  std::string png;
  std::string script_name;
  std::string script;
  std::vector<std::pair<std::string, std::string>> data;  // file name, content
};

// The charts of a report:
//   loss-duplicates.png      lost and duplicated records per scenario and
//                            guarantee (clustered bars, two panels, on a
//                            log(1 + n) scale so 0 stays 0), when there are runs
//   timeline-<slug>.png      per scenario: sink throughput over a trailing
//                            ~1 s window and committed-offset lag, a line per
//                            guarantee, the produced rate until production
//                            ended, fault windows shaded and instantaneous
//                            faults (healed within 0.5 s) a marked vertical
//                            line (none for fewer than two samples in all)
// `timelines` pairs each scenario with its timeline PNG, in order. Pure; any
// thread.
struct ChartPlan {
  std::vector<Chart> charts;
  std::vector<std::pair<std::string, std::string>> timelines;  // scenario, png
};
ChartPlan PlanCharts(const StudyResults& results);

// Writes every chart's script and data files into `plot_dir`, so they are
// there to re-plot even when gnuplot is missing. Blocks on file writes.
absl::Status WriteChartSources(const ChartPlan& plan, const std::string& plot_dir);

// What DrawCharts drew.
struct DrawnCharts {
  std::vector<std::string> pngs;   // names, as in Chart::png
  std::vector<std::string> paths;  // dir joined with each name
  // Why some or all charts are missing (gnuplot not installed, or its error
  // output); empty when every chart was drawn.
  std::string error;
};

// Runs `gnuplot` (found on PATH, terminal pngcairo) on each chart's script in
// dir/plot/, logging its output to plot/gnuplot.log, after removing any PNG
// an earlier report left. Stops at the first chart when gnuplot cannot be
// started. Blocks while gnuplot runs (bounded per chart) and starts child
// processes, so call it from a long-lived thread (see os::ChildProcess).
DrawnCharts DrawCharts(const ChartPlan& plan, const std::string& dir);

}  // namespace tempest::study

#endif  // TEMPEST_STUDY_REPORT_CHARTS_H_
