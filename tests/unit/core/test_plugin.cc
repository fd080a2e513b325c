// A minimal Tempest plugin used by plugin_loader_test: one spout and one
// basic bolt, registered at load time.
#include "common/api/component_registry.h"

namespace {

class PluginSpout : public tempest::api::Spout {
 public:
  absl::Status Open(const tempest::api::Config&, const tempest::api::TopologyContext&,
                    tempest::api::SpoutOutputCollector&) override {
    return absl::OkStatus();
  }
  void NextTuple() override {}
  void DeclareOutputFields(tempest::api::OutputFieldsDeclarer& d) const override {
    d.Declare(tempest::api::Fields({"plugin_field"}));
  }
};

class PluginBolt : public tempest::api::BasicBolt {
 public:
  absl::Status Execute(const tempest::api::Tuple&, tempest::api::BasicOutputCollector&) override {
    return absl::OkStatus();
  }
  void DeclareOutputFields(tempest::api::OutputFieldsDeclarer&) const override {}
};

}  // namespace

TEMPEST_REGISTER_SPOUT("plugin.TestSpout", PluginSpout);
TEMPEST_REGISTER_BASIC_BOLT("plugin.TestBolt", PluginBolt);
TEMPEST_PLUGIN()
