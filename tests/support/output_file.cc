#include "tests/support/output_file.h"

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "tests/support/eventually.h"

namespace tempest::testing {

std::string ReadFileOrEmpty(const std::string& path) {
  std::ifstream in(path);
  std::stringstream buf;
  buf << in.rdbuf();
  return buf.str();
}

std::optional<std::string> WaitForLineWithPrefix(const std::string& path,
                                                 const std::string& prefix,
                                                 std::chrono::milliseconds timeout) {
  std::optional<std::string> found;
  Eventually(timeout, [&] {
    std::istringstream lines(ReadFileOrEmpty(path));
    std::string line;
    while (std::getline(lines, line)) {
      if (line.rfind(prefix, 0) == 0 && !lines.eof()) {  // a complete line only
        found = line.substr(prefix.size());
        return true;
      }
    }
    return false;
  });
  return found;
}

std::string TempestBinary() {
  const char* path = std::getenv("TEMPEST_BINARY");
  return path != nullptr ? path : "tempest";
}

std::string DaemonConfigPreamble(const std::string& zk_connect) {
  return "storm.zookeeper.servers: [\"" + zk_connect +
         "\"]\nstorm.zookeeper.root: /tempest-system\nstorm.zookeeper.session.timeout: 4000\n";
}

}  // namespace tempest::testing
