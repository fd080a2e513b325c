// `tempest nimbus` and the client verbs as users run them: the real binary
// against a real ZooKeeper, the example topology, a broken one.

#include <signal.h>
#include <sys/wait.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "common/os/child_process.h"
#include "common/os/privileges.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/support/eventually.h"
#include "tests/support/output_file.h"
#include "tests/support/run_command.h"
#include "tests/support/temp_dir.h"
#include "tests/support/zk_ensemble.h"
#include "tests/system/nimbus/nimbus_process_fixture.h"

namespace tempest::testing {
namespace {

using json = nlohmann::json;
using std::chrono::milliseconds;
using std::chrono::seconds;

class NimbusCommandTest : public NimbusProcessTest {
 protected:
  void SetUp() override { StartNimbus("nimbus.monitor.freq.secs: 1\n"); }

  json ListJson() {
    CommandRun r = Tempest({"list", "--json"});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    json j = json::parse(r.out, nullptr, false);
    EXPECT_FALSE(j.is_discarded()) << r.out;
    return j.is_discarded() ? json{{"topologies", json::array()}} : j;
  }

  std::string StatusOf(const std::string& name) {
    const json list = ListJson();
    for (const json& t : list["topologies"]) {
      if (t["name"] == name) return t["status"];
    }
    return "";
  }
};

TEST_F(NimbusCommandTest, SubmitListDeactivateActivateKill) {
  EXPECT_EQ(address_.rfind("127.0.0.1:", 0), 0u) << address_;
  CommandRun empty = Tempest({"list"});
  EXPECT_EQ(empty.exit_code, 0) << empty.err;
  EXPECT_NE(empty.out.find("No topologies running."), std::string::npos) << empty.out;

  CommandRun submit = Tempest({"submit", SourceDir() + "/examples/generator-verifier.yaml"});
  ASSERT_EQ(submit.exit_code, 0) << submit.err;
  EXPECT_EQ(submit.out.rfind("generator-verifier-", 0), 0u) << submit.out;

  CommandRun list = Tempest({"list"});
  EXPECT_EQ(list.exit_code, 0) << list.err;
  EXPECT_NE(list.out.find("Topology_name"), std::string::npos) << list.out;
  EXPECT_NE(list.out.find("generator-verifier"), std::string::npos) << list.out;
  EXPECT_NE(list.out.find("ACTIVE"), std::string::npos) << list.out;
  json topologies = ListJson()["topologies"];
  ASSERT_EQ(topologies.size(), 1u);
  EXPECT_EQ(topologies[0]["tasksTotal"], 5);  // 1 spout, 2 identity, 1 verifier, 1 acker
  // The owner is the submitting user, as in `storm list`.
  EXPECT_EQ(topologies[0]["owner"], os::CurrentUserName());
  EXPECT_NE(list.out.find(os::CurrentUserName()), std::string::npos) << list.out;

  CommandRun again = Tempest({"submit", SourceDir() + "/examples/generator-verifier.yaml"});
  EXPECT_EQ(again.exit_code, 1);
  EXPECT_NE(again.err.find("already exists"), std::string::npos) << again.err;

  CommandRun deactivate = Tempest({"deactivate", "generator-verifier"});
  EXPECT_EQ(deactivate.exit_code, 0) << deactivate.err;
  EXPECT_NE(deactivate.out.find("Deactivated topology: generator-verifier"), std::string::npos);
  EXPECT_EQ(StatusOf("generator-verifier"), "INACTIVE");
  EXPECT_EQ(Tempest({"activate", "generator-verifier"}).exit_code, 0);
  EXPECT_EQ(StatusOf("generator-verifier"), "ACTIVE");

  CommandRun kill = Tempest({"kill", "generator-verifier", "-w", "0"});
  EXPECT_EQ(kill.exit_code, 0) << kill.err;
  EXPECT_NE(kill.out.find("Killed topology: generator-verifier"), std::string::npos);
  EXPECT_TRUE(Eventually(milliseconds(30000), [&] { return ListJson()["topologies"].empty(); }));

  CommandRun missing = Tempest({"activate", "generator-verifier"});
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_NE(missing.err.find("no topology named 'generator-verifier'"), std::string::npos)
      << missing.err;
}

TEST_F(NimbusCommandTest, InvalidTopologiesAreRefusedWithClearErrorsAndNothingIsStored) {
  std::ofstream(dir_.File("bad.yaml")) << "name: bad\nspouts:\n  - id: [unclosed\n";
  CommandRun bad_yaml = Tempest({"submit", dir_.File("bad.yaml")});
  EXPECT_EQ(bad_yaml.exit_code, 1);
  EXPECT_NE(bad_yaml.err.find("bad.yaml:"), std::string::npos) << bad_yaml.err;

  std::ofstream(dir_.File("unknown.yaml")) << "name: unknown\n"
                                              "spouts:\n"
                                              "  - id: s\n"
                                              "    className: com.example.NoSuchSpout\n";
  CommandRun unknown = Tempest({"submit", dir_.File("unknown.yaml")});
  EXPECT_EQ(unknown.exit_code, 1);
  EXPECT_NE(unknown.err.find("unknown.yaml:"), std::string::npos) << unknown.err;
  EXPECT_NE(unknown.err.find("com.example.NoSuchSpout"), std::string::npos) << unknown.err;

  EXPECT_TRUE(ListJson()["topologies"].empty());
}

TEST_F(NimbusCommandTest, RebalanceChangesWorkersAndExecutorsAndRefusesBadRequests) {
  CommandRun submit = Tempest({"submit", SourceDir() + "/examples/generator-verifier.yaml"});
  ASSERT_EQ(submit.exit_code, 0) << submit.err;

  CommandRun unknown = Tempest({"rebalance", "no-such-topology", "-n", "2"});
  EXPECT_EQ(unknown.exit_code, 1);
  EXPECT_NE(unknown.err.find("no topology named 'no-such-topology'"), std::string::npos)
      << unknown.err;
  CommandRun malformed = Tempest({"rebalance", "generator-verifier", "-e", "identity"});
  EXPECT_EQ(malformed.exit_code, 2);
  EXPECT_NE(malformed.err.find("COMPONENT=PARALLELISM"), std::string::npos) << malformed.err;
  CommandRun no_component = Tempest({"rebalance", "generator-verifier", "-e", "nope=1"});
  EXPECT_EQ(no_component.exit_code, 1);
  EXPECT_NE(no_component.err.find("no component 'nope'"), std::string::npos) << no_component.err;
  CommandRun too_many = Tempest({"rebalance", "generator-verifier", "-e", "identity=3"});
  EXPECT_EQ(too_many.exit_code, 1);
  EXPECT_NE(too_many.err.find("has 2 tasks"), std::string::npos) << too_many.err;
  EXPECT_EQ(Tempest({"rebalance", "generator-verifier", "-n", "0"}).exit_code, 2);
  EXPECT_EQ(StatusOf("generator-verifier"), "ACTIVE");

  // A long wait: `list` shows REBALANCING meanwhile.
  CommandRun later = Tempest({"rebalance", "generator-verifier", "-w", "3600"});
  EXPECT_EQ(later.exit_code, 0) << later.err;
  EXPECT_NE(later.out.find("Rebalancing topology: generator-verifier"), std::string::npos);
  CommandRun list = Tempest({"list"});
  EXPECT_NE(list.out.find("REBALANCING"), std::string::npos) << list.out;
  CommandRun again = Tempest({"rebalance", "generator-verifier", "-w", "0"});
  EXPECT_EQ(again.exit_code, 1);
  EXPECT_NE(again.err.find("REBALANCING"), std::string::npos) << again.err;
  ASSERT_EQ(Tempest({"kill", "generator-verifier", "-w", "0"}).exit_code, 0);
  ASSERT_TRUE(Eventually(milliseconds(30000), [&] { return ListJson()["topologies"].empty(); }));

  // Applied after the wait: 2 workers asked for, one identity executor.
  ASSERT_EQ(Tempest({"submit", SourceDir() + "/examples/generator-verifier.yaml"}).exit_code, 0);
  CommandRun now = Tempest({"rebalance", "generator-verifier", "-w", "0", "-n", "2", "-e",
                            "identity=1"});
  EXPECT_EQ(now.exit_code, 0) << now.err;
  EXPECT_TRUE(Eventually(milliseconds(30000), [&] {
    const json list = ListJson();
    return !list["topologies"].empty() && list["topologies"][0]["status"] == "ACTIVE" &&
           list["topologies"][0]["requestedWorkers"] == 2 &&
           list["topologies"][0]["executorsTotal"] == 4;
  })) << ListJson().dump();
}

TEST_F(NimbusCommandTest, SigtermStopsNimbusCleanly) {
  ASSERT_TRUE(nimbus_->SignalGroup(SIGTERM));
  auto status = nimbus_->WaitFor(milliseconds(30000));
  ASSERT_TRUE(status.has_value());
  EXPECT_TRUE(WIFEXITED(*status) && WEXITSTATUS(*status) == 0) << os::DescribeWaitStatus(*status);
  nimbus_.reset();
}

}  // namespace
}  // namespace tempest::testing
