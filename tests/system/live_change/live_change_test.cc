// A running topology changed while an independent client (kafka-python, as
// the docs' examples use it) produces 5,000 records/s into it and reads its
// output: live_change_driver.py starts `tempest dev` with 2 supervisors,
// submits KafkaSpout -> IdentityBolt -> KafkaBolt (acked, offsets in
// ZooKeeper) and, a third of the way through each stream, SIGKILLs the
// worker without the spout, SIGKILLs a supervisor with
// its workers, or upgrades the topology to a storm-kafka-client one with
// `tempest upgrade`; it rebalances a WordCountBolt fed 40 words, whose
// counts (written to Kafka with every input) must carry on, not start again;
// and it rebalances the topology from 2 workers to 3, which must start one
// process and restart none.
// Each scenario must lose nothing, a worker the change
// does not touch must keep its process, a rebalance of one bolt reads
// nothing again, and the upgrade must read again no
// more than the old spout had in flight while an independent watcher
// (kazoo on ZooKeeper's owner nodes, kafka-python on the group's offsets)
// never sees a partition with two owners. The gaps, replays and recovery times the
// driver prints are figures for docs/benchmarks.md, never checked here.

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_split.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/support/output_file.h"
#include "tests/support/run_command.h"
#include "tests/support/temp_dir.h"

namespace tempest::testing {
namespace {

using json = nlohmann::json;

TEST(LiveChangeTest, NothingIsLostAndUntouchedWorkersKeepTheirProcesses) {
  TempDir dir("tempest-live-change");
  const char* source = std::getenv("TEMPEST_SOURCE_DIR");
  const std::string driver = std::string(source != nullptr ? source : ".") +
                             "/tests/system/live_change/live_change_driver.py";
  // kafka-python is Debian's python3-kafka: it imports under /usr/bin/python3 only.
  // Every scenario but `rebalance` (an IdentityBolt regrouped): `word-count`
  // rebalances a bolt the same way and checks its state too; the bench runs both.
  std::vector<std::string> argv = {"/usr/bin/python3", driver, "--tempest", TempestBinary(),
                                   "--rate", "5000", "--seconds", "12", "--dir",
                                   dir.File("driver")};
  for (const char* scenario :
       {"word-count", "add-worker", "worker-kill", "upgrade", "supervisor-kill"}) {
    argv.insert(argv.end(), {"--scenario", scenario});
  }
  CommandRun run = RunCommand(argv, dir.File("driver-run"), std::chrono::minutes(8));
  ASSERT_TRUE(run.finished) << run.err;
  std::set<std::string> scenarios;
  for (absl::string_view line : absl::StrSplit(run.out, '\n', absl::SkipEmpty())) {
    const json r = json::parse(line, nullptr, false);
    ASSERT_TRUE(r.is_object()) << line;
    const std::string name = r.value("scenario", "?");
    scenarios.insert(name);
    std::printf("%s\n", std::string(line).c_str());  // the figures, for the test log
    EXPECT_TRUE(r.value("ok", false)) << name << ": " << r["problems"].dump() << "\n" << run.err;
    EXPECT_EQ(r.value("lost", -1), 0) << name;
    EXPECT_EQ(r.value("records", 0), 60000) << name;
    // A rebalance of one bolt (3 workers) and a worker's death (2) leave a worker alone
    // (the driver checks each untouched worker's pid; a supervisor's death may take them all).
    if (name == "rebalance" || name == "word-count") {
      // One bolt regrouped in place: no process restarts and no tree is replayed.
      EXPECT_EQ(r.value("workers_restarted", -1), 0) << line;
      EXPECT_EQ(r.value("replays", -1), 0) << line;
    }
    if (name == "add-worker") {
      // From 2 workers to 3: the new worker takes bolt executors, which leave the
      // others in place; one process starts and none restarts or reads again.
      EXPECT_EQ(r.value("workers_started", -1), 1) << line;
      EXPECT_EQ(r.value("workers_restarted", -1), 0) << line;
      EXPECT_EQ(r.value("replays", -1), 0) << line;
    }
    if (name == "word-count") {
      EXPECT_EQ(r.value("counts_reset", -1), 0) << line;
      EXPECT_EQ(r.value("counts_short", -1), 0) << line;
      EXPECT_EQ(r.value("counts_over", -1), 0) << line;
    }
    if (name == "upgrade") {
      EXPECT_EQ(r.value("owner_overlaps", -1), 0) << line;
      EXPECT_LE(r.value("replays", -1), 2000) << line;  // max.spout.pending x 1 spout task
      EXPECT_EQ(r["handover_ms"].size(), 4u) << "the watcher saw every partition change hands";
    } else if (name != "supervisor-kill") {
      EXPECT_GE(r.value("workers_kept", 0), 1) << name << ": no worker kept its process";
    }
  }
  EXPECT_EQ(scenarios, (std::set<std::string>{"word-count", "add-worker", "worker-kill",
                                              "supervisor-kill", "upgrade"}))
      << run.out << run.err;
  EXPECT_EQ(run.exit_code, 0) << run.err;
}

}  // namespace
}  // namespace tempest::testing
