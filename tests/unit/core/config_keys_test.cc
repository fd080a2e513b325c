// The table of keys Tempest reads (config_keys.h) against the sources: a
// Storm key spelled in code must be in the table, a key in the table must be
// spelled somewhere in code, so `tempest migrate check` says what the
// daemons really do.
#include "common/core/config/config_keys.h"

#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>

#include "common/core/config/config_loader.h"
#include "cli/migrate/migration_check.h"
#include "gtest/gtest.h"

namespace tempest::core {
namespace {

// `tempest migrate check` lives beside its command (cli/migrate/).
using cli::ConfigKeyTakesEffect;

namespace fs = std::filesystem;

// Storm-style key literals in the product's sources, with one place each.
std::map<std::string, std::string> KeyLiteralsInSources() {
  const fs::path root = TEMPEST_CORE_SOURCE_ROOT;
  // The table itself, the list of every other Storm key ConfigLoader
  // accepts (config_keys.cc) and Storm's defaults.yaml key names
  // (storm_default_keys.cc) spell keys without reading them.
  const std::set<std::string> skip = {"common/core/config/config_keys.cc",
                                      "common/core/config/config_loader.cc",
                                      "common/core/config/storm_default_keys.cc"};
  const std::regex literal(R"re("((?:storm|topology|nimbus|supervisor|worker|ui|task|tempest)\.[a-z0-9.\-]+)")re");
  std::map<std::string, std::string> found;
  for (const char* dir : {"common", "worker", "nimbus", "supervisor", "spout", "bolts", "cli",
                          "study"}) {
    for (const auto& entry : fs::recursive_directory_iterator(root / dir)) {
      const fs::path& p = entry.path();
      if (!entry.is_regular_file() || (p.extension() != ".cc" && p.extension() != ".h")) continue;
      const std::string rel = fs::relative(p, root).string();
      if (skip.contains(rel)) continue;
      std::ifstream in(p);
      std::stringstream text;
      text << in.rdbuf();
      const std::string s = text.str();
      for (std::sregex_iterator it(s.begin(), s.end(), literal), end; it != end; ++it) {
        const std::string key = (*it)[1];
        if (ConfigLoader::IsKnownKey(key)) found.emplace(key, rel);
      }
    }
  }
  return found;
}

TEST(ConfigKeysTest, EveryStormKeySpelledInCodeIsInTheTable) {
  for (const auto& [key, where] : KeyLiteralsInSources()) {
    EXPECT_TRUE(TempestReadsKey(key)) << key << " is spelled in " << where
                                      << " but missing from common/core/config/config_keys.cc";
  }
}

TEST(ConfigKeysTest, EveryKeyInTheTableIsSpelledInCode) {
  const std::map<std::string, std::string> in_code = KeyLiteralsInSources();
  for (const ConfigKeyReader& k : KeysTempestReads()) {
    EXPECT_TRUE(in_code.contains(std::string(k.key)))
        << k.key << " is listed as read (by " << k.read_by << ") but no source spells it";
    EXPECT_TRUE(ConfigLoader::IsKnownKey(k.key)) << k.key;
    EXPECT_FALSE(k.read_by.empty()) << k.key;
  }
}

TEST(ConfigKeysTest, MigrateCheckClassifiesBySameTable) {
  // Keys the daemons read, reported once as "accepted but not used".
  for (std::string_view key : {"nimbus.seeds", "supervisor.slots.ports", "ui.port"}) {
    EXPECT_TRUE(ConfigKeyTakesEffect(key)) << key;
  }
  EXPECT_TRUE(ConfigKeyTakesEffect("tempest.resources.dir"));
  // A JVM-only Storm key: accepted, no effect.
  EXPECT_FALSE(ConfigKeyTakesEffect("worker.childopts"));
  EXPECT_TRUE(ConfigLoader::IsKnownKey("worker.childopts"));
}

}  // namespace
}  // namespace tempest::core
