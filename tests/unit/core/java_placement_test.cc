// Fields-grouping placement matches Storm's for 1000 sample keys. The
// expected task indices come from java_placement_reference.py, an
// independent implementation of Java's hashCode rules, run as a child.
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "common/core/grouping/fields_grouper.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

namespace tempest::core {
namespace {

std::string ReferenceScript() {
  const char* root = std::getenv("TEMPEST_SOURCE_DIR");
  std::filesystem::path base = root != nullptr ? root : TEMPEST_CORE_SOURCE_ROOT;
  return (base / "tests/unit/core/java_placement_reference.py").string();
}

std::string Python() {
  return std::filesystem::exists("/usr/bin/python3") ? "/usr/bin/python3" : "python3";
}

std::vector<std::string> RunReference() {
  std::vector<std::string> lines;
  const std::string command = Python() + " '" + ReferenceScript() + "'";
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return lines;
  std::string line;
  char buffer[4096];
  while (fgets(buffer, sizeof(buffer), pipe) != nullptr) {
    line += buffer;
    if (!line.empty() && line.back() == '\n') {
      line.pop_back();
      lines.push_back(std::move(line));
      line.clear();
    }
  }
  EXPECT_EQ(pclose(pipe), 0) << command;
  return lines;
}

api::Value FromJson(const nlohmann::json& j) {
  if (j.is_string()) return api::Value(j.get<std::string>());
  return api::Value(j.get<int64_t>());  // Storm's Long
}

TEST(JavaPlacementTest, ThousandSampleKeysLandOnStormsTaskIndex) {
  const std::vector<std::string> lines = RunReference();
  ASSERT_EQ(lines.size(), 1000u);
  int mismatches = 0;
  for (const std::string& line : lines) {
    const nlohmann::json sample = nlohmann::json::parse(line);
    api::Values key;
    std::vector<int> fields;
    for (const nlohmann::json& v : sample["key"]) {
      fields.push_back(static_cast<int>(key.size()));
      key.push_back(FromJson(v));
    }
    const int tasks = sample["tasks"].get<int>();
    std::vector<api::TaskId> targets;
    for (int t = 0; t < tasks; ++t) targets.push_back(api::TaskId(10 + t));
    FieldsGrouper grouper(targets, fields);
    const int index = grouper.ChooseIndex(key);
    if (index != sample["index"].get<int>()) {
      ADD_FAILURE() << "key " << sample["key"].dump() << " over " << tasks << " tasks: got index "
                    << index << ", Storm picks " << sample["index"];
      if (++mismatches > 10) break;
    }
    // Choose agrees with ChooseIndex over the sorted targets.
    ASSERT_EQ(grouper.Choose(key)[0], targets[static_cast<size_t>(index)]);
  }
  EXPECT_EQ(mismatches, 0);
}

}  // namespace
}  // namespace tempest::core
