#ifndef TEMPEST_STUDY_REPORT_H_
#define TEMPEST_STUDY_REPORT_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "study/study_results.h"

namespace tempest::study {

// What WriteReport wrote. Paths are `dir` joined with the file name.
struct ReportFiles {
  std::string results_json;
  std::string report_md;
  std::vector<std::string> charts;  // the PNGs gnuplot produced
  // Why some or all charts are missing (gnuplot not installed, or its error
  // output); empty when every chart was drawn.
  std::string charts_error;
};

// The whole report of a study, from its three parts: the results JSON
// (study/results_json.h), the Markdown (study/report_markdown.h) and the
// gnuplot charts (study/report_charts.h). Writes into `dir` (created if
// needed):
//   results.json                 ResultsToJson(results)
//   report.md                    ReportMarkdown: parameters, verdict, a row per run
//                                with a sentence explaining its loss and
//                                duplication (ExplainRun) linked to the study
//                                guide, the violations, the runs not tested,
//                                the charts, how to read them
//   loss-duplicates.png          lost and duplicated records per scenario and
//                                guarantee (clustered bars, two panels)
//   timeline-<scenario>.png      per scenario: sink throughput and committed-
//                                offset lag over time, a line per guarantee,
//                                the produced rate until production ended,
//                                fault windows shaded and instantaneous faults
//                                (healed within 0.5 s of its start) drawn as a
//                                marked vertical line (none for a scenario
//                                with fewer than two samples in all)
//   plot/                        the gnuplot scripts and data files behind the
//                                charts, kept for re-plotting
//                                (`cd plot && gnuplot loss-duplicates.gp`)
// Charts are drawn by running `gnuplot` (found on PATH, terminal pngcairo).
// When it is missing or fails, results.json, report.md and plot/ are still
// written and the reason is returned in `charts_error`; only a failure to
// write a file fails the call. Blocks while gnuplot runs (bounded per chart).
// Starts child processes, so call it from a long-lived thread (see
// os::ChildProcess); not for concurrent use on the same `dir`.
absl::StatusOr<ReportFiles> WriteReport(const StudyResults& results, const std::string& dir);

}  // namespace tempest::study

#endif  // TEMPEST_STUDY_REPORT_H_
