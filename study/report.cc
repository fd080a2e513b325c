#include "study/report.h"

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
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
  if (absl::Status s = os::MakeDirs(plot_dir); !s.ok()) return s;
  if (absl::Status s = os::WriteFileAtomically(files.results_json, ResultsToJson(r)); !s.ok()) {
    return s;
  }
  const ChartPlan charts = PlanCharts(r);
  if (absl::Status s = WriteChartSources(charts, plot_dir); !s.ok()) return s;
  DrawnCharts drawn = DrawCharts(charts, dir);
  files.charts = std::move(drawn.paths);
  files.charts_error = drawn.error;
  if (absl::Status s = os::WriteFileAtomically(
          files.report_md, ReportMarkdown(r, drawn.pngs, files.charts_error, charts.timelines));
      !s.ok()) {
    return s;
  }
  return files;
}

}  // namespace tempest::study
