// The worker's process title: the words, and the in-place rewrite of a
// command line's memory (on a buffer laid out as the kernel lays out argv).

#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "worker/worker_process.h"

namespace tempest::worker {
namespace {

// argv strings packed back to back, as exec leaves them.
struct FakeArgv {
  explicit FakeArgv(const std::vector<std::string>& args) {
    for (const std::string& a : args) {
      memory += a;
      memory += '\0';
    }
    size_t at = 0;
    for (const std::string& a : args) {
      argv.push_back(memory.data() + at);
      at += a.size() + 1;
    }
    argv.push_back(nullptr);
  }
  // What /proc/self/cmdline would show, NULs included.
  std::string Area() const { return memory; }
  std::string memory;
  std::vector<char*> argv;
};

TEST(WorkerProcessTitleTest, NamesTopologyAndPortAndKeepsTheSupervisorsMarks) {
  EXPECT_EQ(WorkerProcessTitle("wordcount-1-17", "sup-a", 6700),
            (std::vector<std::string>{"tempest", "worker", "wordcount-1-17:6700",
                                      "--supervisor-id", "sup-a", "--port", "6700"}));
}

TEST(SetProcessTitleTest, RewritesTheArgvAreaAndZeroesTheRest) {
  FakeArgv a({"/proc/self/exe", "worker", "--topology-id", "wordcount-1-17", "--supervisor-id",
              "sup-a", "--port", "6700", "--worker-dir", "/var/tempest/workers/6700"});
  const size_t size = a.memory.size();
  SetProcessTitle(static_cast<int>(a.argv.size() - 1), a.argv.data(),
                  WorkerProcessTitle("wordcount-1-17", "sup-a", 6700));
  ASSERT_EQ(a.memory.size(), size);
  std::string expected;
  for (const char* w : {"tempest", "worker", "wordcount-1-17:6700", "--supervisor-id", "sup-a",
                        "--port", "6700"}) {
    expected += w;
    expected += '\0';
  }
  EXPECT_EQ(a.memory.substr(0, expected.size()), expected);
  EXPECT_EQ(a.memory.find_first_not_of('\0', expected.size()), std::string::npos);
}

TEST(SetProcessTitleTest, CutsATitleLongerThanTheArea) {
  FakeArgv a({"t", "worker"});
  SetProcessTitle(2, a.argv.data(), WorkerProcessTitle("a-very-long-topology-name", "s", 1));
  EXPECT_EQ(a.memory.size(), 9u);
  EXPECT_EQ(a.memory, std::string("tempest\0\0", 9));
}

TEST(SetProcessTitleTest, NullArgvIsIgnored) { SetProcessTitle(0, nullptr, {"x"}); }

}  // namespace
}  // namespace tempest::worker
