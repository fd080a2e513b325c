// ErrorLog: what a worker process publishes of its components' errors.
#include "worker/worker_context.h"

#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"

namespace tempest::worker {
namespace {

TEST(ErrorLogTest, HandsOutEachErrorOnceInTheComponentsOwnWords) {
  ErrorLog log;
  log.Report(api::ComponentId("split"), 3, absl::InvalidArgumentError("bad sentence"));
  log.Report(api::ComponentId("count"), 5, absl::UnknownError("counter overflow"));
  std::vector<ComponentError> first = log.TakeUnpublished();
  ASSERT_EQ(first.size(), 2u);
  EXPECT_EQ(first[0].component, "split");
  EXPECT_EQ(first[0].task, 3);
  EXPECT_EQ(first[0].message, "bad sentence") << "no status code prefix";
  EXPECT_GT(first[0].time_secs, 1'700'000'000);
  EXPECT_TRUE(log.TakeUnpublished().empty()) << "handed out once";
  EXPECT_EQ(log.count(), 2);
}

TEST(ErrorLogTest, AComponentFailingEverythingKeepsOnlyItsNewestUnpublishedErrors) {
  ErrorLog log;
  for (int i = 0; i < 1000; ++i) {
    log.Report(api::ComponentId("noisy"), 1, absl::UnknownError(absl::StrCat("failure ", i)));
  }
  log.Report(api::ComponentId("quiet"), 2, absl::UnknownError("once"));
  std::vector<ComponentError> errors = log.TakeUnpublished();
  size_t noisy = 0;
  for (const ComponentError& e : errors) noisy += e.component == "noisy" ? 1 : 0;
  EXPECT_EQ(noisy, ErrorLog::kMaxUnpublishedPerComponent);
  EXPECT_EQ(errors.size(), ErrorLog::kMaxUnpublishedPerComponent + 1) << "quiet kept too";
  bool newest = false;
  for (const ComponentError& e : errors) newest = newest || e.message == "failure 999";
  EXPECT_TRUE(newest);
  EXPECT_EQ(log.count(), 1001);
}

}  // namespace
}  // namespace tempest::worker
