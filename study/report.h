#ifndef TEMPEST_STUDY_REPORT_H_
#define TEMPEST_STUDY_REPORT_H_

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "study/study_results.h"

namespace tempest::study {

// The study's results as pretty-printed (2-space) JSON, the format of
// results.json:
//   {"seed":N,"records":N,"rate":X,"started_at":"..","duration_s":X,"runs":[run,...]}
// where each run is an object with every field of RunResult under its own
// name (absent optionals are null, `dedup_sink` is {"lost","duplicated",
// "deduplicated","expected_loss"} or null, `not_tested` is true or false
// with `not_tested_reason` beside it) and `samples` is a list of compact arrays
// [t_s, sink_received, committed, log_end]. A non-finite double is written
// as null. Pure; any thread.
std::string ResultsToJson(const StudyResults& results);

// The inverse of ResultsToJson. InvalidArgument naming the field ("runs[2]
// (worker-kill, at-least-once): \"lost\" is missing") when `text` is not
// JSON, a required field is missing or has the wrong type. Optional fields
// (fault_*_s, recovery_s, dedup_sink) may be null or absent; unknown fields
// are ignored so newer files stay readable. Results written before runs were
// marked not tested have no `not_tested`: it is then derived from the run's
// figures (NotTestedReason), so an old vacuous run does not pass either. A null plain double reads
// as NaN (that is how ResultsToJson writes one). Pure; any thread.
absl::StatusOr<StudyResults> ResultsFromJson(std::string_view text);

// The study's verdict, counted over its runs. It passes only when there are
// runs, none broke an expectation and every one tested something: a run
// marked not_tested (the fault fired before the pipeline flowed, or nothing
// was measured) holds its expectations vacuously and fails the verdict.
// report.md's verdict line and the exit status of `tempest study` both come
// from this. Pure; any thread.
struct Verdict {
  size_t runs = 0;
  size_t violations = 0;      // broken expectations, over all runs
  size_t runs_violating = 0;  // runs with at least one
  size_t not_tested = 0;      // runs marked not_tested
  size_t unsettled = 0;       // runs that did not settle before their deadline
  bool passed() const { return runs > 0 && violations == 0 && not_tested == 0; }
};
Verdict VerdictOf(const StudyResults& results);

// What WriteReport wrote. Paths are `dir` joined with the file name.
struct ReportFiles {
  std::string results_json;
  std::string report_md;
  std::vector<std::string> charts;  // the PNGs gnuplot produced
  // Why some or all charts are missing (gnuplot not installed, or its error
  // output); empty when every chart was drawn.
  std::string charts_error;
};

// Writes into `dir` (created if needed):
//   results.json                 ResultsToJson(results)
//   report.md                    parameters, verdict, one table row per run
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
