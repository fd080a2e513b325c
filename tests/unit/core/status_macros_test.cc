#include "common/core/status_macros.h"

#include <memory>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "gtest/gtest.h"

namespace tempest::core {
namespace {

absl::Status Fails() { return absl::InvalidArgumentError("bad input"); }
absl::Status Succeeds() { return absl::OkStatus(); }
absl::StatusOr<int> Number(bool ok) {
  if (!ok) return absl::NotFoundError("no number");
  return 42;
}
absl::StatusOr<std::unique_ptr<std::string>> MoveOnly() {
  return std::make_unique<std::string>("moved");
}

absl::Status ReturnIfErrorTwice(absl::Status first, int* steps_run) {
  TEMPEST_RETURN_IF_ERROR(first);
  ++*steps_run;
  TEMPEST_RETURN_IF_ERROR(Succeeds());
  ++*steps_run;
  return absl::OkStatus();
}

TEST(StatusMacrosTest, ReturnIfErrorPassesOkThrough) {
  int steps_run = 0;
  EXPECT_TRUE(ReturnIfErrorTwice(absl::OkStatus(), &steps_run).ok());
  EXPECT_EQ(steps_run, 2);
}

TEST(StatusMacrosTest, ReturnIfErrorReturnsTheFirstError) {
  int steps_run = 0;
  absl::Status status = ReturnIfErrorTwice(Fails(), &steps_run);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(status.message(), "bad input");
  EXPECT_EQ(steps_run, 0);
}

TEST(StatusMacrosTest, ReturnIfErrorAcceptsStatusOr) {
  auto run = [](bool ok) -> absl::Status {
    TEMPEST_RETURN_IF_ERROR(Number(ok));
    return absl::OkStatus();
  };
  EXPECT_TRUE(run(true).ok());
  EXPECT_EQ(run(false).code(), absl::StatusCode::kNotFound);
}

TEST(StatusMacrosTest, ReturnIfErrorEvaluatesItsArgumentOnce) {
  int calls = 0;
  auto run = [&]() -> absl::Status {
    TEMPEST_RETURN_IF_ERROR((++calls, Fails()));
    return absl::OkStatus();
  };
  EXPECT_FALSE(run().ok());
  EXPECT_EQ(calls, 1);
}

TEST(StatusMacrosTest, ReturnIfErrorWorksInStatusOrFunctions) {
  auto run = []() -> absl::StatusOr<std::string> {
    TEMPEST_RETURN_IF_ERROR(Fails());
    return std::string("unreachable");
  };
  absl::StatusOr<std::string> result = run();
  EXPECT_EQ(result.status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(StatusMacrosTest, ReturnIfErrorIsOneStatementInUnbracedIf) {
  auto run = [](bool check) -> absl::Status {
    if (check)
      TEMPEST_RETURN_IF_ERROR(Fails());
    else
      return absl::OkStatus();
    return absl::UnknownError("fell through");
  };
  EXPECT_EQ(run(true).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(run(false).ok());
}

TEST(StatusMacrosTest, AssignOrReturnDeclaresTheValue) {
  auto run = [](bool ok) -> absl::StatusOr<int> {
    TEMPEST_ASSIGN_OR_RETURN(int n, Number(ok));
    TEMPEST_ASSIGN_OR_RETURN(auto m, Number(ok));  // two uses in one scope
    return n + m;
  };
  EXPECT_EQ(*run(true), 84);
  EXPECT_EQ(run(false).status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(run(false).status().message(), "no number");
}

TEST(StatusMacrosTest, AssignOrReturnAssignsAnExistingVariable) {
  int n = 0;
  auto run = [&]() -> absl::Status {
    TEMPEST_ASSIGN_OR_RETURN(n, Number(true));
    return absl::OkStatus();
  };
  ASSERT_TRUE(run().ok());
  EXPECT_EQ(n, 42);
}

TEST(StatusMacrosTest, AssignOrReturnMovesMoveOnlyValues) {
  auto run = []() -> absl::StatusOr<std::string> {
    TEMPEST_ASSIGN_OR_RETURN(std::unique_ptr<std::string> text, MoveOnly());
    return *text;
  };
  EXPECT_EQ(*run(), "moved");
}

TEST(StatusMacrosTest, ShortAliasesBehaveTheSame) {
  auto run = [](bool ok) -> absl::StatusOr<int> {
    RETURN_IF_ERROR(Succeeds());
    ASSIGN_OR_RETURN(int n, Number(ok));
    return n;
  };
  EXPECT_EQ(*run(true), 42);
  EXPECT_EQ(run(false).status().code(), absl::StatusCode::kNotFound);
}

}  // namespace
}  // namespace tempest::core
