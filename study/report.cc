#include "study/report.h"

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "common/core/status_macros.h"
#include "common/os/files.h"
#include "study/report_charts.h"
#include "study/report_markdown.h"
#include "study/results_json.h"

namespace tempest::study {

absl::StatusOr<ReportFiles> WriteReport(const StudyResults& r, const std::string& dir) {
  ReportFiles files;
  files.results_json = absl::StrCat(dir, "/results.json");
  files.report_md = absl::StrCat(dir, "/report.md");
  const std::string plot_dir = absl::StrCat(dir, "/plot");
  RETURN_IF_ERROR(os::MakeDirs(plot_dir));
  RETURN_IF_ERROR(os::WriteFileAtomically(files.results_json, ResultsToJson(r)));
  const ChartPlan charts = PlanCharts(r);
  RETURN_IF_ERROR(WriteChartSources(charts, plot_dir));
  DrawnCharts drawn = DrawCharts(charts, dir);
  files.charts = std::move(drawn.paths);
  files.charts_error = drawn.error;
  RETURN_IF_ERROR(os::WriteFileAtomically(
      files.report_md, ReportMarkdown(r, drawn.pngs, files.charts_error, charts.timelines)));
  return files;
}

}  // namespace tempest::study
