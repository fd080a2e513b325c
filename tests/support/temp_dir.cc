#include "tests/support/temp_dir.h"

#include <stdlib.h>

#include <cstdio>
#include <filesystem>
#include <vector>

#include "common/os/loopback.h"

namespace tempest::testing {

TempDir::TempDir(const std::string& prefix) {
  const char* base = std::getenv("TMPDIR");
  std::string pattern = std::string(base != nullptr ? base : "/tmp") + "/" + prefix + "-XXXXXX";
  std::vector<char> buf(pattern.begin(), pattern.end());
  buf.push_back('\0');
  if (::mkdtemp(buf.data()) == nullptr) {
    std::perror("mkdtemp");
    std::abort();
  }
  path_ = buf.data();
  // Open to every account, sticky like /tmp: under root, cluster workers run
  // as an unprivileged user (supervisor.worker.user) and write here too.
  std::filesystem::permissions(path_,
                               std::filesystem::perms::all | std::filesystem::perms::sticky_bit);
}

TempDir::~TempDir() {
  if (std::getenv("TEMPEST_KEEP_TEST_DIRS") != nullptr) return;
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

int FreePort() {
  auto port = os::FindFreeLoopbackPort();
  if (!port.ok()) {
    std::fprintf(stderr, "no free loopback port: %s\n", port.status().ToString().c_str());
    std::abort();
  }
  return *port;
}

}  // namespace tempest::testing
