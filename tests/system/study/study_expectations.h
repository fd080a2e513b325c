#ifndef TEMPEST_TESTS_SYSTEM_STUDY_STUDY_EXPECTATIONS_H_
#define TEMPEST_TESTS_SYSTEM_STUDY_STUDY_EXPECTATIONS_H_

// What every run of a `tempest study` must show in results.json, whatever
// its scenario: tested, no violation, no committed offset gone back, no
// commit by a replaced owner, at-least-once and the effectively-once sink
// losing nothing, at-most-once duplicating nothing.

#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

namespace tempest::testing {

inline void ExpectEachGuaranteeKept(const nlohmann::json& run) {
  const std::string guarantee = run.value("guarantee", "");
  EXPECT_FALSE(run.value("not_tested", true)) << run.value("not_tested_reason", "");
  EXPECT_TRUE(run["violations"].empty()) << run["violations"].dump();
  EXPECT_EQ(run["offset_regressions"], 0);
  EXPECT_EQ(run["zombie_commits"], 0);
  if (guarantee == "at-least-once") {
    EXPECT_EQ(run["lost"], 0);
    ASSERT_TRUE(run["dedup_sink"].is_object());
    EXPECT_EQ(run["dedup_sink"]["lost"], 0);
    EXPECT_EQ(run["dedup_sink"]["duplicated"], 0);
  }
  if (guarantee == "at-most-once") {
    EXPECT_EQ(run["duplicated"], 0);
  }
}

}  // namespace tempest::testing

#endif  // TEMPEST_TESTS_SYSTEM_STUDY_STUDY_EXPECTATIONS_H_
