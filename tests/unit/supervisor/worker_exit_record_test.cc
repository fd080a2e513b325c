// The exit record a supervisor writes to ZooKeeper: what it keeps of a
// worker's output (the last lines, bounded and escaped, credentials left
// out) and the JSON nimbus reads.

#include "supervisor/worker_exit_record.h"

#include <string>

#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

namespace tempest::supervisor {
namespace {

TEST(WorkerExitRecordTest, KeepsTheLastNonEmptyLines) {
  std::string log;
  for (int i = 0; i < 20; ++i) log += "line " + std::to_string(i) + "\n\n";
  const std::vector<std::string> lines = OutputTailLines(log);
  ASSERT_EQ(lines.size(), kExitOutputLines);
  EXPECT_EQ(lines.front(), "line 15");
  EXPECT_EQ(lines.back(), "line 19");
}

TEST(WorkerExitRecordTest, EscapesControlBytesAndKeepsUtf8) {
  constexpr char kLog[] = "red \x1b[31mtext\r\nnul \0 here\ncaf\xc3\xa9 \xff\n";
  const std::vector<std::string> lines = OutputTailLines(std::string(kLog, sizeof(kLog) - 1));
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[0], "red \\x1b[31mtext");
  EXPECT_EQ(lines[1], "nul \\x00 here");
  EXPECT_EQ(lines[2], "caf\xc3\xa9 \\xff");
}

TEST(WorkerExitRecordTest, LeavesOutLinesNamingACredential) {
  const std::vector<std::string> lines = OutputTailLines(
      "config storm.zookeeper.auth.payload=u:p\nPassword: hunter2\nspout failed\n");
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[0].find("u:p"), std::string::npos);
  EXPECT_EQ(lines[1].find("hunter2"), std::string::npos);
  EXPECT_EQ(lines[2], "spout failed");
}

TEST(WorkerExitRecordTest, BoundsEachLine) {
  const std::vector<std::string> lines = OutputTailLines(std::string(10000, 'x'));
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0].size(), kExitOutputLineChars);
}

TEST(WorkerExitRecordTest, EncodesWhatNimbusReads) {
  WorkerExitRecord r;
  r.topology_id = "wc-1-2";
  r.port = 6700;
  r.pid = 42;
  r.status = "exited 1";
  r.output = {"cannot open 'x'"};
  r.restarts = 4;
  r.consecutive_failures = 3;
  r.exit_time_ms = 1000;
  r.next_attempt_ms = 5000;
  const nlohmann::json doc = nlohmann::json::parse(EncodeWorkerExitRecord(r, "sup", "host-a"));
  EXPECT_EQ(doc["state"], "failing");
  EXPECT_EQ(doc["supervisorId"], "sup");
  EXPECT_EQ(doc["host"], "host-a");
  EXPECT_EQ(doc["status"], "exited 1");
  EXPECT_EQ(doc["output"][0], "cannot open 'x'");
  EXPECT_EQ(doc["restarts"], 4);
  EXPECT_EQ(doc["consecutiveFailures"], 3);
  EXPECT_EQ(doc["nextAttemptMs"], 5000);
  r.running = true;
  EXPECT_EQ(nlohmann::json::parse(EncodeWorkerExitRecord(r, "sup", "h"))["state"], "running");
}

}  // namespace
}  // namespace tempest::supervisor
