#ifndef TEMPEST_TESTS_UNIT_STUDY_STUDY_RUN_CHECKS_H_
#define TEMPEST_TESTS_UNIT_STUDY_STUDY_RUN_CHECKS_H_

// Checks shared by the unit tests of the scenarios that have their own
// bounds and their own report table (rebalance-under-load,
// upgrade-under-load).

#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "study/report_markdown.h"
#include "study/study_results.h"

namespace tempest::study {

// The bound of `figure`, or one named "missing" that fails.
inline BoundCheck BoundOf(const std::vector<BoundCheck>& bounds, const std::string& figure) {
  for (const BoundCheck& b : bounds) {
    if (b.figure == figure) return b;
  }
  return BoundCheck{"missing", "", "", false};
}

// The report of `results` gives the scenario its own section `heading`, with
// `row` in it, instead of the partition scenarios' bounds table; returns the
// report from that section on (empty when it is missing).
inline std::string ExpectOwnReportSection(const StudyResults& results, const std::string& heading,
                                          const std::string& row) {
  const std::string md = ReportMarkdown(results, {}, "", {});
  EXPECT_EQ(md.find("## Bounds (partition scenarios)"), std::string::npos) << md;
  const size_t section = md.find(heading);
  EXPECT_NE(section, std::string::npos) << md;
  if (section == std::string::npos) return "";
  EXPECT_NE(md.find(row, section), std::string::npos) << md;
  return md.substr(section);
}

}  // namespace tempest::study

#endif  // TEMPEST_TESTS_UNIT_STUDY_STUDY_RUN_CHECKS_H_
