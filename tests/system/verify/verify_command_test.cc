// `tempest verify` as users run it: the real binary over crafted logs,
// including malformed and binary input, checking output and exit codes.

#include <algorithm>
#include <fstream>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/support/output_file.h"
#include "tests/support/run_command.h"
#include "tests/support/temp_dir.h"

namespace tempest::testing {
namespace {

using CommandResult = testing::CommandRun;

class VerifyCommandTest : public ::testing::Test {
 protected:
  std::string Write(const std::string& name, const std::string& content) {
    std::ofstream f(dir_.File(name), std::ios::binary);
    f << content;
    return dir_.File(name);
  }
  CommandResult Verify(std::vector<std::string> args) {
    static int n = 0;
    ++n;
    args.insert(args.begin(), {TempestBinary(), "verify"});
    CommandResult run =
        testing::RunCommand(args, dir_.File("verify" + std::to_string(n)), std::chrono::seconds(60));
    EXPECT_TRUE(run.finished) << "tempest verify did not finish";
    return run;
  }
  TempDir dir_{"verify-command-test"};
};

TEST_F(VerifyCommandTest, JsonReportOverSeveralLogs) {
  std::string a = Write("a.log", "0\n1\n1\n4\n");
  std::string b = Write("b.log", "2\n1\n");
  CommandResult run = Verify({a, b, "--expected", "6", "--json"});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  auto j = nlohmann::json::parse(run.out);
  EXPECT_EQ(j["received"], 6);
  EXPECT_EQ(j["unique"], 4);
  EXPECT_EQ(j["missing"], 2);
  EXPECT_EQ(j["duplicated"], 2);
  EXPECT_EQ(j["max_copies"], 3);
  EXPECT_EQ(j["expected"], 6);
  EXPECT_EQ(j["malformed"], 0);
  EXPECT_EQ(j["missing_sample"], nlohmann::json({3, 5}));
}

TEST_F(VerifyCommandTest, MalformedInputIsCountedNeverACrash) {
  std::string junk = "0\nhello\n\n-\n1e5\n12345678901234567890123\n";
  // Binary junk on one line (no newline or digit, so it cannot form a value).
  for (int i = 0; i < 4096; ++i) {
    char c = static_cast<char>((i * 37 + 11) % 256);
    junk.push_back(c == '\n' || (c >= '0' && c <= '9') ? 'x' : c);
  }
  junk += "\n1\n2";  // "2" is torn (no newline)
  CommandResult run = Verify({Write("junk.log", junk), "--expected", "3", "--json"});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  auto j = nlohmann::json::parse(run.out);
  EXPECT_GE(j["malformed"].get<int64_t>(), 6);
  EXPECT_EQ(j["missing"], 1);  // only 2 (torn) is missing
  EXPECT_EQ(j["complete"], false);

  CommandResult text = Verify({dir_.File("junk.log"), "--expected", "3"});
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("malformed:"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("INCOMPLETE"), std::string::npos) << text.out;
}

TEST_F(VerifyCommandTest, StrictExitsOneWhenIncompleteAndZeroWhenComplete) {
  std::string gap = Write("gap.log", "0\n2\n");
  EXPECT_EQ(Verify({gap, "--expected", "3", "--strict"}).exit_code, 1);
  std::string full = Write("full.log", "2\n0\n1\n1\n");
  CommandResult ok = Verify({full, "--expected", "3", "--strict"});
  EXPECT_EQ(ok.exit_code, 0) << ok.err;
  EXPECT_NE(ok.out.find("complete"), std::string::npos);
}

TEST_F(VerifyCommandTest, ErrorsAreOneLineOnStderr) {
  CommandResult missing = Verify({dir_.File("no-such.log")});
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_TRUE(missing.out.empty());
  EXPECT_NE(missing.err.find("no-such.log"), std::string::npos) << missing.err;
  EXPECT_EQ(std::count(missing.err.begin(), missing.err.end(), '\n'), 1) << missing.err;

  CommandResult usage = Verify({});
  EXPECT_EQ(usage.exit_code, 2) << usage.err;
  CommandResult negative = Verify({Write("x.log", "1\n"), "--expected", "-1"});
  EXPECT_EQ(negative.exit_code, 2) << negative.err;
  CommandResult not_a_number = Verify({dir_.File("x.log"), "--expected", "lots"});
  EXPECT_EQ(not_a_number.exit_code, 2) << not_a_number.err;
}

}  // namespace
}  // namespace tempest::testing
