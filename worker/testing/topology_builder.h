#ifndef TEMPEST_WORKER_TESTING_TOPOLOGY_BUILDER_H_
#define TEMPEST_WORKER_TESTING_TOPOLOGY_BUILDER_H_

#include <string>
#include <utility>
#include <vector>

#include "common/core/topology/topology_def.h"

namespace tempest::worker::testing {

// Builds a core::TopologyDef in code, Storm TopologyBuilder style, for tests
// and benchmarks:
//
//   TopologyBuilder b("t");
//   b.SetSpout("words", "test.Words");
//   b.SetBolt("count", "test.Count", 2).FieldsGrouping("words", {"word"});
//   core::TopologyDef def = b.Build();
//
// A plain value; single-threaded.
class TopologyBuilder {
 public:
  class BoltDeclarer {
   public:
    BoltDeclarer& ShuffleGrouping(const std::string& from, const std::string& stream = "default") {
      return Add(from, stream, core::GroupingType::kShuffle, {});
    }
    BoltDeclarer& FieldsGrouping(const std::string& from, std::vector<std::string> fields,
                                 const std::string& stream = "default") {
      return Add(from, stream, core::GroupingType::kFields, std::move(fields));
    }
    BoltDeclarer& GlobalGrouping(const std::string& from, const std::string& stream = "default") {
      return Add(from, stream, core::GroupingType::kGlobal, {});
    }
    BoltDeclarer& AllGrouping(const std::string& from, const std::string& stream = "default") {
      return Add(from, stream, core::GroupingType::kAll, {});
    }
    BoltDeclarer& DirectGrouping(const std::string& from, const std::string& stream = "default") {
      return Add(from, stream, core::GroupingType::kDirect, {});
    }
    BoltDeclarer& LocalOrShuffleGrouping(const std::string& from,
                                         const std::string& stream = "default") {
      return Add(from, stream, core::GroupingType::kLocalOrShuffle, {});
    }
    BoltDeclarer& NumTasks(int n) {
      def_->bolts[index_].num_tasks = n;
      return *this;
    }
    BoltDeclarer& Config(std::string_view key, api::Value value) {
      def_->bolts[index_].config.Set(key, std::move(value));
      return *this;
    }

   private:
    friend class TopologyBuilder;
    BoltDeclarer(core::TopologyDef* def, size_t index) : def_(def), index_(index) {}
    BoltDeclarer& Add(const std::string& from, const std::string& stream, core::GroupingType type,
                      std::vector<std::string> fields) {
      core::StreamDef s;
      s.from = api::ComponentId(from);
      s.to = def_->bolts[index_].id;
      s.stream = api::StreamId(stream);
      s.grouping.type = type;
      s.grouping.fields = std::move(fields);
      def_->streams.push_back(std::move(s));
      return *this;
    }
    core::TopologyDef* def_;
    size_t index_;
  };

  explicit TopologyBuilder(std::string name) { def_.name = std::move(name); }

  void SetSpout(const std::string& id, const std::string& class_name, int parallelism = 1,
                int num_tasks = -1) {
    def_.spouts.push_back(Component(core::ComponentDef::Kind::kSpout, id, class_name,
                                    parallelism, num_tasks));
  }
  BoltDeclarer SetBolt(const std::string& id, const std::string& class_name,
                       int parallelism = 1, int num_tasks = -1) {
    def_.bolts.push_back(
        Component(core::ComponentDef::Kind::kBolt, id, class_name, parallelism, num_tasks));
    return BoltDeclarer(&def_, def_.bolts.size() - 1);
  }
  // Topology config (e.g. api::kTopologyAckerExecutors).
  TopologyBuilder& Config(std::string_view key, api::Value value) {
    def_.config.Set(key, std::move(value));
    return *this;
  }
  // Per-component config of a spout.
  TopologyBuilder& SpoutConfig(const std::string& id, std::string_view key, api::Value value) {
    for (core::ComponentDef& c : def_.spouts) {
      if (c.id.value() == id) c.config.Set(key, std::move(value));
    }
    return *this;
  }

  core::TopologyDef Build() const { return def_; }

 private:
  static core::ComponentDef Component(core::ComponentDef::Kind kind, const std::string& id,
                                      const std::string& class_name, int parallelism,
                                      int num_tasks) {
    core::ComponentDef c;
    c.kind = kind;
    c.id = api::ComponentId(id);
    c.args.class_name = class_name;
    c.args.id = c.id;
    c.parallelism = parallelism;
    c.num_tasks = num_tasks;
    return c;
  }
  core::TopologyDef def_;
};

}  // namespace tempest::worker::testing

#endif  // TEMPEST_WORKER_TESTING_TOPOLOGY_BUILDER_H_
