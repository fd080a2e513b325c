#include "bolts/verifier_bolt.h"

#include <algorithm>
#include <fstream>
#include <sstream>

#include "absl/strings/str_split.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/support/component_harness.h"
#include "tests/support/fake_clock.h"
#include "tests/support/output_file.h"
#include "tests/support/temp_dir.h"

namespace tempest::bolts {
namespace {

using testing::FakeClock;
using testing::FakeOutputCollector;
using testing::MakeArgs;
using testing::MakeTuple;
using testing::ReadFileOrEmpty;

api::Tuple Seq(int64_t seq) { return MakeTuple({"seq", "key"}, {api::Value(seq), "k"}); }

std::vector<std::string> LogLines(const std::string& path) {
  std::vector<std::string> out = absl::StrSplit(ReadFileOrEmpty(path), '\n', absl::SkipEmpty());
  return out;
}

class VerifierBoltTest : public ::testing::Test {
 protected:
  std::unique_ptr<VerifierBolt> Prepared(api::ValueMap props, bool ticks = true) {
    props.emplace("logPath", dir_.File("log"));
    auto made = VerifierBolt::Create(MakeArgs("tempest.VerifierBolt", std::move(props)), clock_);
    EXPECT_TRUE(made.ok()) << made.status();
    if (!made.ok()) return nullptr;
    api::Config component;
    if (ticks) component.Set(api::kTopologyTickTupleFreqSecs, 1);
    absl::Status prepared =
        (*made)->Prepare({}, testing::MakeContext("verifier", {}, component), out_);
    EXPECT_TRUE(prepared.ok()) << prepared;
    return *std::move(made);
  }

  testing::TempDir dir_{"verifier-test"};
  FakeClock clock_;
  FakeOutputCollector out_;
};

TEST_F(VerifierBoltTest, AcksOnlyAfterTheValueIsInTheLog) {
  auto bolt = Prepared({{"batchSize", 4}});
  int64_t acked_checked = 0;
  out_.on_ack = [&](const api::Tuple& t) {
    // At the moment of the ack the value must already be in the file.
    std::vector<std::string> lines = LogLines(dir_.File("log"));
    EXPECT_NE(std::find(lines.begin(), lines.end(), std::to_string(t.GetInt(0))), lines.end())
        << "acked " << t.GetInt(0) << " before it was written";
    ++acked_checked;
  };
  for (int i = 0; i < 3; ++i) bolt->Execute(Seq(i));
  EXPECT_TRUE(out_.acked.empty());                  // held: batch not full
  EXPECT_TRUE(LogLines(dir_.File("log")).empty());  // and not written yet
  EXPECT_EQ(bolt->held(), 3);
  bolt->Execute(Seq(3));  // the 4th fills the batch
  EXPECT_EQ(out_.acked.size(), 4u);
  EXPECT_EQ(acked_checked, 4);
  EXPECT_EQ(LogLines(dir_.File("log")), (std::vector<std::string>{"0", "1", "2", "3"}));
  EXPECT_EQ(bolt->flushes(), 1);
}

TEST_F(VerifierBoltTest, TickFlushesAndReleasesHeldAcks) {
  auto bolt = Prepared({{"batchSize", 1000}});
  bolt->Execute(Seq(10));
  bolt->Execute(Seq(11));
  EXPECT_TRUE(out_.acked.empty());
  bolt->Execute(api::Tuple::MakeTick(1));
  ASSERT_EQ(out_.acked.size(), 3u);  // two inputs and the tick
  EXPECT_EQ(out_.acked[0].GetInt(0), 10);
  EXPECT_EQ(LogLines(dir_.File("log")), (std::vector<std::string>{"10", "11"}));
}

TEST_F(VerifierBoltTest, FlushesOnceTheOldestHeldTupleIsOld) {
  auto bolt = Prepared({{"batchSize", 1000}, {"flushIntervalMs", 50}}, /*ticks=*/false);
  bolt->Execute(Seq(1));
  clock_.Advance(std::chrono::milliseconds(20));
  bolt->Execute(Seq(2));
  EXPECT_TRUE(out_.acked.empty());
  clock_.Advance(std::chrono::milliseconds(40));
  bolt->Execute(Seq(3));
  EXPECT_EQ(out_.acked.size(), 3u);
}

// A quiet stream's last inputs must not wait for more input or for ticks:
// the executor's Poll releases them once the batch is due.
TEST_F(VerifierBoltTest, PollReleasesAQuietStreamsLastInputsWithoutTicks) {
  auto bolt = Prepared({{"batchSize", 1000}, {"flushIntervalMs", 200}}, /*ticks=*/false);
  ASSERT_EQ(bolt->PollInterval(), std::chrono::milliseconds(100));
  bolt->Execute(Seq(7));
  bolt->Execute(Seq(8));
  EXPECT_FALSE(bolt->Poll());  // not due yet: nothing written, nothing acked
  EXPECT_TRUE(out_.acked.empty());
  clock_.Advance(std::chrono::milliseconds(200));
  EXPECT_TRUE(bolt->Poll());
  ASSERT_EQ(out_.acked.size(), 2u);
  EXPECT_EQ(LogLines(dir_.File("log")), (std::vector<std::string>{"7", "8"}));
  EXPECT_FALSE(bolt->Poll());  // nothing held any more
  EXPECT_EQ(bolt->flushes(), 1);
}

TEST_F(VerifierBoltTest, AZeroFlushIntervalWritesEachInputAndNeedsNoPolling) {
  auto bolt = Prepared({{"flushIntervalMs", 0}}, /*ticks=*/false);
  EXPECT_EQ(bolt->PollInterval(), std::nullopt);
  bolt->Execute(Seq(1));
  EXPECT_EQ(out_.acked.size(), 1u);
}

TEST_F(VerifierBoltTest, CleanupFlushesHeldTuples) {
  auto bolt = Prepared({{"batchSize", 1000}});
  bolt->Execute(Seq(1));
  bolt->Cleanup();
  EXPECT_EQ(out_.acked.size(), 1u);
  EXPECT_EQ(LogLines(dir_.File("log")), (std::vector<std::string>{"1"}));
}

TEST_F(VerifierBoltTest, FailedWriteFailsHeldTuplesAndAcksNone) {
  auto made = VerifierBolt::Create(
      MakeArgs("tempest.VerifierBolt", {{"logPath", "/dev/full"}, {"batchSize", 2}}), clock_);
  ASSERT_TRUE(made.ok());
  ASSERT_TRUE((*made)->Prepare({}, testing::MakeContext("verifier"), out_).ok());
  (*made)->Execute(Seq(1));
  (*made)->Execute(Seq(2));
  EXPECT_TRUE(out_.acked.empty());
  EXPECT_EQ(out_.failed.size(), 2u);
  ASSERT_FALSE(out_.errors.empty());
  EXPECT_NE(out_.errors[0].find("/dev/full"), std::string::npos) << out_.errors[0];
}

TEST_F(VerifierBoltTest, RestartContinuesTheLogAndDropsATornLine) {
  {
    auto bolt = Prepared({{"batchSize", 1}});
    bolt->Execute(Seq(1));
    bolt->Execute(Seq(2));
    bolt->Cleanup();
  }
  {
    // A crash mid-write left "3" without its newline: never acked.
    std::ofstream torn(dir_.File("log"), std::ios::app);
    torn << "3";
  }
  auto bolt = Prepared({{"batchSize", 1}, {"reportPath", dir_.File("report.json")}});
  bolt->Execute(Seq(34));
  bolt->Execute(Seq(2));  // a replay: a duplicate
  bolt->Cleanup();
  EXPECT_EQ(LogLines(dir_.File("log")), (std::vector<std::string>{"1", "2", "34", "2"}));
  auto report = nlohmann::json::parse(ReadFileOrEmpty(dir_.File("report.json")));
  EXPECT_EQ(report["received"], 4);
  EXPECT_EQ(report["unique"], 3);
  EXPECT_EQ(report["duplicated"], 1);
  EXPECT_EQ(report["max_copies"], 2);
  EXPECT_EQ(report["malformed"], 0);
}

TEST_F(VerifierBoltTest, ReportAndSeenFileAtCleanup) {
  auto bolt = Prepared({{"batchSize", 3},
                        {"expected", 6},
                        {"reportPath", dir_.File("out/report.json")},
                        {"seenPath", dir_.File("out/seen.txt")}});
  for (int64_t v : {4, 0, 2, 2, 4, 4, 1}) bolt->Execute(Seq(v));
  bolt->Cleanup();
  EXPECT_EQ(out_.acked.size(), 7u);
  auto report = nlohmann::json::parse(ReadFileOrEmpty(dir_.File("out/report.json")));
  EXPECT_EQ(report["received"], 7);
  EXPECT_EQ(report["unique"], 4);
  EXPECT_EQ(report["missing"], 2);  // 3 and 5
  EXPECT_EQ(report["duplicated"], 3);
  EXPECT_EQ(report["max_copies"], 3);
  EXPECT_EQ(report["expected"], 6);
  EXPECT_EQ(ReadFileOrEmpty(dir_.File("out/seen.txt")), "0\n1\n2\n4\n");
}

TEST_F(VerifierBoltTest, NonIntegerValuesAreLoggedAsMalformedAndAcked) {
  auto bolt = Prepared({{"batchSize", 1}, {"reportPath", dir_.File("report.json")}});
  bolt->Execute(MakeTuple({"seq"}, {api::Value("17")}));  // numeric string: fine
  bolt->Execute(MakeTuple({"seq"}, {api::Value("seventeen")}));
  bolt->Execute(MakeTuple({"other"}, {api::Value(1)}));
  bolt->Cleanup();
  EXPECT_EQ(out_.acked.size(), 3u);
  EXPECT_EQ(out_.errors.size(), 2u);
  auto report = nlohmann::json::parse(ReadFileOrEmpty(dir_.File("report.json")));
  EXPECT_EQ(report["received"], 1);
  EXPECT_EQ(report["malformed"], 2);
}

TEST_F(VerifierBoltTest, CustomFieldAndTaskPlaceholder) {
  auto made = VerifierBolt::Create(
      MakeArgs("tempest.VerifierBolt",
               {{"field", "n"}, {"batchSize", 1}, {"logPath", dir_.File("log-{task}")}}),
      clock_);
  ASSERT_TRUE(made.ok());
  ASSERT_TRUE((*made)->Prepare({}, testing::MakeContext("v", {}, {}, 5), out_).ok());
  EXPECT_EQ((*made)->log_path(), dir_.File("log-5"));
  (*made)->Execute(MakeTuple({"x", "n"}, {api::Value("a"), api::Value(99)}));
  EXPECT_EQ(LogLines(dir_.File("log-5")), (std::vector<std::string>{"99"}));
}

TEST_F(VerifierBoltTest, BadPropertiesAreClearErrors) {
  auto no_log = VerifierBolt::Create(MakeArgs("tempest.VerifierBolt"));
  ASSERT_FALSE(no_log.ok());
  EXPECT_NE(no_log.status().message().find("logPath"), std::string::npos);
  for (api::ValueMap props :
       std::vector<api::ValueMap>{{{"logPath", "x"}, {"expected", -1}},
                                  {{"logPath", "x"}, {"expected", "many"}},
                                  {{"logPath", "x"}, {"batchSize", 0}},
                                  {{"logPath", "x"}, {"flushIntervalMs", -5}}}) {
    auto made = VerifierBolt::Create(MakeArgs("tempest.VerifierBolt", props));
    EXPECT_EQ(made.status().code(), absl::StatusCode::kInvalidArgument)
        << api::Value(props).DebugString();
  }
  auto positional = VerifierBolt::Create(MakeArgs("tempest.VerifierBolt", {}, {"a.log", "r.json"}));
  ASSERT_TRUE(positional.ok()) << positional.status();
  EXPECT_EQ((*positional)->options().report_path, "r.json");
  // An unopenable log fails Prepare with the path in the message.
  auto bad_dir = VerifierBolt::Create(
      MakeArgs("tempest.VerifierBolt", {{"logPath", "/proc/no/such/dir/log"}}));
  ASSERT_TRUE(bad_dir.ok());
  absl::Status prepared = (*bad_dir)->Prepare({}, testing::MakeContext("v"), out_);
  EXPECT_FALSE(prepared.ok());
  EXPECT_NE(prepared.message().find("/proc/no/such/dir/log"), std::string::npos) << prepared;
}

}  // namespace
}  // namespace tempest::bolts
