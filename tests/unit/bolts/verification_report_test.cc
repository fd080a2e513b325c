#include "bolts/verification_report.h"

#include <algorithm>
#include <fstream>

#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/support/temp_dir.h"

namespace tempest::bolts {
namespace {

class VerificationReportTest : public ::testing::Test {
 protected:
  std::string Write(const std::string& name, const std::string& content) {
    std::ofstream f(dir_.File(name), std::ios::binary);
    f << content;
    return dir_.File(name);
  }
  testing::TempDir dir_{"verify-report-test"};
};

TEST_F(VerificationReportTest, CountsDuplicatesAndMissingAgainstExpected) {
  std::string log = Write("a.log", "0\n1\n1\n3\n1\n5\n");
  std::vector<int64_t> seen;
  auto r = VerifyLogs({log}, 6, &seen);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->received, 6);
  EXPECT_EQ(r->unique, 4);
  EXPECT_EQ(r->duplicated, 2);
  EXPECT_EQ(r->max_copies, 3);
  EXPECT_EQ(r->missing, 2);
  EXPECT_EQ(r->missing_sample, (std::vector<int64_t>{2, 4}));
  EXPECT_EQ(r->unexpected, 0);
  EXPECT_EQ(r->malformed, 0);
  EXPECT_FALSE(r->Complete());
  EXPECT_EQ(seen, (std::vector<int64_t>{0, 1, 3, 5}));
}

TEST_F(VerificationReportTest, WithoutExpectedNothingIsMissing) {
  auto r = VerifyLogs({Write("a.log", "10\n20\n")}, std::nullopt);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->missing, 0);
  EXPECT_FALSE(r->expected.has_value());
  EXPECT_TRUE(r->Complete());
  EXPECT_EQ(nlohmann::json::parse(ReportToJson(*r))["expected"], nullptr);
}

TEST_F(VerificationReportTest, ValuesOutsideTheRangeAreUnexpected) {
  auto r = VerifyLogs({Write("a.log", "0\n1\n2\n7\n-1\n")}, 3);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->missing, 0);
  EXPECT_EQ(r->unexpected, 2);
  EXPECT_FALSE(r->Complete());
}

TEST_F(VerificationReportTest, SeveralLogsAreOneReport) {
  auto r = VerifyLogs({Write("a.log", "0\n2\n"), Write("b.log", "1\n2\n3\n")}, 4);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->received, 5);
  EXPECT_EQ(r->unique, 4);
  EXPECT_EQ(r->missing, 0);
  EXPECT_EQ(r->duplicated, 1);
  EXPECT_TRUE(r->Complete());
}

TEST_F(VerificationReportTest, MalformedAndTornLinesAreCountedNotFatal) {
  std::string log = Write("a.log", "0\nabc\n\n1x\n!seq=foo\n99999999999999999999999\n1\n2");
  auto r = VerifyLogs({log}, 3);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->received, 2);   // 0 and 1; "2" lacks its newline (torn)
  EXPECT_EQ(r->malformed, 6);  // abc, empty, 1x, !seq=foo, overflow, torn 2
  EXPECT_EQ(r->missing, 1);
  ASSERT_FALSE(r->malformed_sample.empty());
  EXPECT_EQ(r->malformed_sample[0], log + ":2");
}

TEST_F(VerificationReportTest, BinaryGarbageDoesNotCrash) {
  std::string junk;
  for (int i = 0; i < 5000; ++i) junk.push_back(static_cast<char>((i * 131) % 256));
  auto r = VerifyLogs({Write("junk.log", junk)}, 10);
  ASSERT_TRUE(r.ok());
  EXPECT_GT(r->malformed, 0);
  // Every line is accounted for as a value or as malformed.
  int64_t lines = std::count(junk.begin(), junk.end(), '\n') + (junk.back() != '\n' ? 1 : 0);
  EXPECT_EQ(r->received + r->malformed, lines);
}

TEST_F(VerificationReportTest, LongLinesAcrossReadBuffers) {
  std::string content;
  for (int i = 0; i < 50000; ++i) content += std::to_string(i) + "\n";
  content += std::string(200000, '7') + "\n";  // one absurdly long line
  auto r = VerifyLogs({Write("big.log", content)}, 50000);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->received, 50000);
  EXPECT_EQ(r->missing, 0);
  EXPECT_EQ(r->malformed, 1);
}

TEST_F(VerificationReportTest, EmptyLogWithExpectedMissesEverything) {
  auto r = VerifyLogs({Write("empty.log", "")}, 5);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->received, 0);
  EXPECT_EQ(r->max_copies, 0);
  EXPECT_EQ(r->missing, 5);
}

TEST_F(VerificationReportTest, MissingFileAndNegativeExpectedAreErrors) {
  auto r = VerifyLogs({dir_.File("nope.log")}, std::nullopt);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kNotFound);
  EXPECT_NE(r.status().message().find("nope.log"), std::string::npos);
  auto neg = VerifyLogs({Write("a.log", "1\n")}, -1);
  EXPECT_EQ(neg.status().code(), absl::StatusCode::kInvalidArgument);
}

TEST_F(VerificationReportTest, JsonHasTheDocumentedKeys) {
  auto r = VerifyLogs({Write("a.log", "0\n0\n2\n")}, 3);
  ASSERT_TRUE(r.ok());
  std::string text = ReportToJson(*r);
  EXPECT_EQ(text.find('\n'), std::string::npos);
  auto j = nlohmann::json::parse(text);
  EXPECT_EQ(j["received"], 3);
  EXPECT_EQ(j["unique"], 2);
  EXPECT_EQ(j["missing"], 1);
  EXPECT_EQ(j["duplicated"], 1);
  EXPECT_EQ(j["max_copies"], 2);
  EXPECT_EQ(j["expected"], 3);
  EXPECT_EQ(j["complete"], false);
  EXPECT_NE(ReportToText(*r).find("missing:    1"), std::string::npos) << ReportToText(*r);
}

// A log that two runs appended to is complete (nothing missing) but must not
// read like one clean run.
TEST_F(VerificationReportTest, TheResultLineNamesDuplicates) {
  auto twice = VerifyLogs({Write("twice.log", "0\n1\n0\n1\n")}, 2);
  ASSERT_TRUE(twice.ok());
  EXPECT_NE(ReportToText(*twice).find(
                "result:     complete with 2 duplicates (replays, or a log written by more than "
                "one run)"),
            std::string::npos)
      << ReportToText(*twice);
  auto once = VerifyLogs({Write("once.log", "0\n1\n")}, 2);
  ASSERT_TRUE(once.ok());
  EXPECT_NE(ReportToText(*once).find("result:     complete\n"), std::string::npos)
      << ReportToText(*once);
}

TEST_F(VerificationReportTest, DedupLinesCountAsValuesAndDeduplicated) {
  std::string log = Write("dedup.log",
                          "@t 0 0 0\n"
                          "@t 0 1 1\n"
                          "=t 0 0\n"
                          "=t 0 1\n"
                          "@t 1 0 2\n"
                          "@t 1 1 !value=two\n"  // key applied, value not an integer
                          "=t x 1\n"             // a broken key
                          "@t 1 2\n"             // no value
                          "=t 1 0");             // torn: never acked
  auto r = VerifyLogs({log}, 3);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->received, 3);
  EXPECT_EQ(r->unique, 3);
  EXPECT_EQ(r->duplicated, 0);
  EXPECT_EQ(r->deduplicated, 2);
  EXPECT_EQ(r->missing, 0);
  EXPECT_EQ(r->malformed, 4);
  ASSERT_FALSE(r->malformed_sample.empty());
  EXPECT_EQ(r->malformed_sample[0], log + ":6");
  auto j = nlohmann::json::parse(ReportToJson(*r));
  EXPECT_EQ(j["deduplicated"], 2);
  EXPECT_NE(ReportToText(*r).find("deduplicated: 2"), std::string::npos) << ReportToText(*r);
}

TEST_F(VerificationReportTest, OldPlainLogsReadAsBeforeAndMixWithDedupLogs) {
  // A log written before dedup existed: bare integers and '!' evidence.
  std::string old_log = Write("old.log", "0\n1\n1\n!seq=x\n");
  auto old_only = VerifyLogs({old_log}, 2);
  ASSERT_TRUE(old_only.ok());
  EXPECT_EQ(old_only->received, 3);
  EXPECT_EQ(old_only->unique, 2);
  EXPECT_EQ(old_only->duplicated, 1);
  EXPECT_EQ(old_only->deduplicated, 0);
  EXPECT_EQ(old_only->malformed, 1);
  EXPECT_EQ(nlohmann::json::parse(ReportToJson(*old_only))["deduplicated"], 0);
  // Read together with a dedup log: one report.
  auto both = VerifyLogs({old_log, Write("new.log", "@t 0 0 2\n=t 0 0\n")}, 3);
  ASSERT_TRUE(both.ok());
  EXPECT_EQ(both->received, 4);
  EXPECT_EQ(both->missing, 0);
  EXPECT_EQ(both->deduplicated, 1);
}

TEST_F(VerificationReportTest, ForEachLogLineMarksATornLastLine) {
  std::vector<std::pair<std::string, bool>> lines;
  absl::Status s = ForEachLogLine(Write("l.log", "a\n\nbc"), [&](std::string_view l, bool c) {
    lines.emplace_back(std::string(l), c);
  });
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_EQ(lines,
            (std::vector<std::pair<std::string, bool>>{{"a", true}, {"", true}, {"bc", false}}));
  EXPECT_EQ(ForEachLogLine(dir_.File("none"), [](std::string_view, bool) {}).code(),
            absl::StatusCode::kNotFound);
}

}  // namespace
}  // namespace tempest::bolts
