// What the operator reads as the cluster's configuration (docs/user-guide.md,
// "Configuration"; nimbus/README.md): a real `tempest nimbus` started with a
// config file and -c overrides answers /api/v1/cluster/configuration with the
// values it runs with, ?origin=1 says where each came from (default, the
// file, the command line), credentials read "<redacted>", and a topology's
// page shows its own settings over the cluster's.

#include <string>

#include "common/net/http_client.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/system/nimbus/nimbus_process_fixture.h"

namespace tempest::testing {
namespace {

using json = nlohmann::json;

class NimbusConfigurationTest : public NimbusProcessTest {
 protected:
  json Get(const std::string& target) {
    const size_t colon = address_.rfind(':');
    net::HttpClient client(address_.substr(0, colon), std::stoi(address_.substr(colon + 1)));
    auto reply = client.Get(target);
    EXPECT_TRUE(reply.ok()) << target << ": " << reply.status();
    if (!reply.ok()) return json();
    EXPECT_EQ(reply->status, 200) << target << ": " << reply->body;
    return json::parse(reply->body, nullptr, /*allow_exceptions=*/false);
  }
};

TEST_F(NimbusConfigurationTest, RestShowsTheEffectiveConfigAndWhereEachValueCameFrom) {
  StartZooKeeper();
  const std::string connect = zk_->ConnectString();
  const size_t colon = connect.rfind(':');
  const int zk_port = std::stoi(connect.substr(colon + 1));
  // ZooKeeper's port in its own key, as Storm's files spell it.
  StartNimbusWith("storm.zookeeper.servers: [\"" + connect.substr(0, colon) + "\"]\n" +
                      "storm.zookeeper.port: " + std::to_string(zk_port) + "\n" +
                      "storm.zookeeper.root: /tempest-config-test\n"
                      "ui.host: 127.0.0.1\n"
                      "ui.port: 0\n"
                      "nimbus.task.timeout.secs: 45\n"
                      "my.team.setting: blue\n",
                  {"-c", "nimbus.task.timeout.secs=50", "-c", "my.db.password=hunter2"});

  // Storm UI's shape: key -> value, what nimbus runs with.
  const json plain = Get("/api/v1/cluster/configuration");
  ASSERT_TRUE(plain.is_object()) << plain.dump();
  EXPECT_EQ(plain["storm.zookeeper.port"], zk_port) << "not Storm's default 2181";
  EXPECT_EQ(plain["storm.zookeeper.root"], "/tempest-config-test");
  EXPECT_EQ(plain["my.team.setting"], "blue");
  EXPECT_EQ(plain["nimbus.task.timeout.secs"], 50) << "the command line over the file";
  EXPECT_EQ(plain["nimbus.supervisor.timeout.secs"], 60);
  EXPECT_EQ(plain["my.db.password"], "<redacted>");
  EXPECT_FALSE(plain.contains("configuration")) << "no new field in Storm's answer";

  const json with = Get("/api/v1/cluster/configuration?origin=1");
  ASSERT_TRUE(with.is_object()) << with.dump();
  EXPECT_EQ(with["configuration"], plain);
  const json& from = with["origins"];
  const std::string file = "file:" + dir_.File("tempest.yaml");
  EXPECT_EQ(from["storm.zookeeper.port"], file);
  EXPECT_EQ(from["my.team.setting"], file);
  EXPECT_EQ(from["nimbus.task.timeout.secs"], "command line");
  EXPECT_EQ(from["my.db.password"], "command line");
  EXPECT_EQ(from["nimbus.supervisor.timeout.secs"], "default");
  EXPECT_EQ(from["supervisor.slots.ports"], "default");
  for (const auto& [key, value] : plain.items()) EXPECT_TRUE(from.contains(key)) << key;
  EXPECT_EQ(with.dump().find("hunter2"), std::string::npos);

  // A topology's page: its own settings, the cluster's daemon settings.
  CommandRun submitted = Tempest({"submit", SourceDir() + "/examples/generator-verifier.yaml",
                                  "--inactive", "-c", "topology.message.timeout.secs=41"});
  ASSERT_EQ(submitted.exit_code, 0) << submitted.err;
  const std::string id = submitted.out.substr(0, submitted.out.find('\n'));
  const json topology = Get("/api/v1/topology/" + id);
  ASSERT_TRUE(topology.is_object()) << topology.dump();
  const json& conf = topology["configuration"];
  const json& conf_from = topology["configurationOrigins"];
  EXPECT_EQ(conf["topology.message.timeout.secs"], 41);
  EXPECT_EQ(conf_from["topology.message.timeout.secs"], "override");
  EXPECT_EQ(conf_from["topology.name"], "topology");
  EXPECT_EQ(conf["storm.zookeeper.port"], zk_port);
  EXPECT_EQ(conf_from["storm.zookeeper.port"], "cluster");
  EXPECT_EQ(conf["my.db.password"], "<redacted>");
  EXPECT_EQ(conf_from["topology.debug"], "default");
  for (const auto& [key, value] : conf.items()) EXPECT_TRUE(conf_from.contains(key)) << key;
  EXPECT_EQ(topology.dump().find("hunter2"), std::string::npos);
}

}  // namespace
}  // namespace tempest::testing
