// The pure pieces of the network limits: the JSON depth scanner and the
// bounded handler pool (the rate-limited log is core's: core_rate_limited_log_test).

#include <atomic>
#include <chrono>
#include <functional>
#include <future>
#include <string>

#include "common/core/json_depth.h"
#include "common/net/handler_pool.h"
#include "gtest/gtest.h"

namespace tempest::net {
namespace {

TEST(JsonDepthTest, CountsNestingOfArraysAndObjects) {
  EXPECT_EQ(core::JsonNestingDepth(""), 0);
  EXPECT_EQ(core::JsonNestingDepth("42"), 0);
  EXPECT_EQ(core::JsonNestingDepth("{}"), 1);
  EXPECT_EQ(core::JsonNestingDepth(R"({"a": [1, {"b": [[]]}], "c": {}})"), 5);
}

TEST(JsonDepthTest, BracketsInsideStringsAndEscapedQuotesDoNotCount) {
  EXPECT_EQ(core::JsonNestingDepth(R"({"a": "[[[{{{"})"), 1);
  EXPECT_EQ(core::JsonNestingDepth(R"({"a": "say \"[[[\" \\", "b": [1]})"), 2);
}

TEST(JsonDepthTest, RejectsDeepNestingWithTheOffsetAndAcceptsTheLimit) {
  const std::string at_limit = std::string(64, '[') + std::string(64, ']');
  EXPECT_TRUE(core::CheckJsonDepth(at_limit).ok());
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  const absl::Status s = core::CheckJsonDepth(deep);
  ASSERT_TRUE(absl::IsInvalidArgument(s)) << s;
  EXPECT_NE(s.message().find("deeper than 64 levels at byte 64"), std::string::npos) << s;
  // Unbalanced input is not this scanner's business, but it must not fail.
  EXPECT_TRUE(core::CheckJsonDepth("]]]}}}").ok());
  EXPECT_FALSE(core::CheckJsonDepth(std::string(65, '{')).ok());
}

TEST(HandlerPoolTest, RunsTasksAndRefusesBeyondTheQueueBound) {
  HandlerPool pool(1, 2, "pool-test");
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  std::promise<void> started;
  std::function<void()> blocker = [&started, released] {
    started.set_value();
    released.wait();
  };
  ASSERT_TRUE(pool.TrySubmit(blocker));
  started.get_future().wait();  // the only thread is busy now
  std::atomic<int> ran{0};
  std::function<void()> a = [&ran] { ++ran; };
  std::function<void()> b = [&ran] { ++ran; };
  std::function<void()> c = [&ran] { ++ran; };
  EXPECT_TRUE(pool.TrySubmit(a));
  EXPECT_TRUE(pool.TrySubmit(b));
  EXPECT_FALSE(pool.TrySubmit(c));  // two are waiting already
  EXPECT_TRUE(static_cast<bool>(c));  // a refused task is left with the caller
  release.set_value();
  pool.Stop();  // joins; what was queued may be dropped, never run twice
  EXPECT_LE(ran.load(), 2);
  std::function<void()> d = [&ran] { ++ran; };
  EXPECT_FALSE(pool.TrySubmit(d));
}

}  // namespace
}  // namespace tempest::net
