#ifndef TEMPEST_STUDY_REPORT_MARKDOWN_H_
#define TEMPEST_STUDY_REPORT_MARKDOWN_H_

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "study/study_results.h"

namespace tempest::study {

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

// `text` fit for a Markdown table cell: '|' escaped (it would split the
// cell), newlines as spaces. Pure; any thread.
std::string MarkdownCell(const std::string& text);

// report.md: the parameters, the verdict line (VerdictOf), one table row per
// run ending with the ExplainRun sentence linked to docs/study-guide.md, the
// violations, the runs not tested, the charts that were drawn (`drawn`, PNG
// names; `timelines` pairs each scenario with its timeline PNG, in order),
// the reason others were not (`charts_error`), and how to read it all.
// Pure; any thread.
std::string ReportMarkdown(const StudyResults& results, const std::vector<std::string>& drawn,
                           const std::string& charts_error,
                           const std::vector<std::pair<std::string, std::string>>& timelines);

}  // namespace tempest::study

#endif  // TEMPEST_STUDY_REPORT_MARKDOWN_H_
