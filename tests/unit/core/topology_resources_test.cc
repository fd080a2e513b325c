#include "common/core/topology/topology_resources.h"

#include <filesystem>
#include <fstream>
#include <string>

#include "gtest/gtest.h"
#include "tests/support/temp_dir.h"

namespace tempest::core {
namespace {

namespace fs = std::filesystem;

v1::TopologyResources One(const std::string& path) {
  v1::TopologyResources r;
  v1::ResourceFile* f = r.add_files();
  f->set_path(path);
  f->set_data("x");
  return r;
}

TEST(TopologyResourcesTest, CollectAndMaterializeRoundTrip) {
  testing::TempDir src("tempest-res-src");
  fs::create_directories(src.File("lib"));
  fs::create_directories(src.File(".git"));
  std::ofstream(src.File("run.sh")) << "#!/bin/sh\necho hi\n";
  fs::permissions(src.File("run.sh"), fs::perms::owner_all);
  std::ofstream(src.File("lib/storm.py")) << "print('storm')\n";
  std::ofstream(src.File(".git/config")) << "hidden\n";
  std::ofstream(src.File(".hidden")) << "hidden\n";

  absl::StatusOr<v1::TopologyResources> r = CollectResources(src.path());
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->files_size(), 2);  // hidden files and folders stay behind

  testing::TempDir dst("tempest-res-dst");
  ASSERT_TRUE(MaterializeResources(*r, dst.File("resources")).ok());
  std::ifstream in(dst.File("resources/lib/storm.py"));
  std::string line;
  std::getline(in, line);
  EXPECT_EQ(line, "print('storm')");
  const fs::perms run = fs::status(dst.File("resources/run.sh")).permissions();
  EXPECT_NE(run & fs::perms::owner_exec, fs::perms::none);
  const fs::perms lib = fs::status(dst.File("resources/lib/storm.py")).permissions();
  EXPECT_EQ(lib & fs::perms::owner_exec, fs::perms::none);
}

TEST(TopologyResourcesTest, PathsThatLeaveTheDirectoryAreRefused) {
  for (const std::string bad : {"", "/etc/passwd", "../escape", "a/../../b", "a//b", "./a", "a/."}) {
    EXPECT_FALSE(ValidateResources(One(bad)).ok()) << bad;
    testing::TempDir dst("tempest-res-bad");
    EXPECT_FALSE(MaterializeResources(One(bad), dst.File("resources")).ok()) << bad;
  }
  EXPECT_TRUE(ValidateResources(One("a/b.py")).ok());
}

TEST(TopologyResourcesTest, TooMuchDataIsRefused) {
  v1::TopologyResources r;
  v1::ResourceFile* f = r.add_files();
  f->set_path("big");
  f->set_data(std::string(static_cast<size_t>(kMaxResourceBytes) + 1, 'x'));
  EXPECT_FALSE(ValidateResources(r).ok());
  EXPECT_FALSE(CollectResources("/definitely/not/a/dir").ok());
}

}  // namespace
}  // namespace tempest::core
