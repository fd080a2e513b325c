#include <cstdio>
#include <filesystem>
#include <memory>

#include "absl/strings/str_cat.h"
#include "cli/cli_text.h"
#include "cli/commands.h"
#include "common/coord/zk_server.h"
#include "common/os/loopback.h"

namespace tempest::cli {
namespace {

struct DevZookeeperOptions {
  int port = 0;      // 0: a free one
  std::string dir;   // empty: a fresh temp dir, removed at exit
};

int RunDevZookeeper(const DevZookeeperOptions& opts) {
  BlockStopSignals();
  coord::ZkServerConfig config;
  bool remove_dir = false;
  if (opts.dir.empty()) {
    std::string pattern = (std::filesystem::temp_directory_path() / "tempest-dev-zk-XXXXXX");
    if (::mkdtemp(pattern.data()) == nullptr) return Fail("cannot create a temp dir");
    config.data_dir = pattern;
    remove_dir = true;
  } else {
    config.data_dir = std::filesystem::absolute(opts.dir);
  }
  if (opts.port > 0) {
    config.client_port = opts.port;
  } else {
    auto port = os::FindFreeLoopbackPort();
    if (!port.ok()) return Fail(std::string(port.status().message()));
    config.client_port = *port;
  }
  int rc = 0;
  {
    auto server = coord::ZkServer::Start(config);
    if (!server.ok()) return Fail(std::string(server.status().message()));
    if (auto s = (*server)->WaitServing(std::chrono::seconds(60)); !s.ok()) {
      rc = Fail(std::string(s.message()));
    } else {
      std::printf("zookeeper=%s\n", (*server)->connect_string().c_str());
      std::fflush(stdout);
      std::fprintf(stderr, "tempest: ZooKeeper serving; data in %s; Ctrl-C stops it\n",
                   config.data_dir.c_str());
      WaitForStopSignal();
    }
    (*server)->Stop();
  }
  if (remove_dir) {
    std::error_code ec;
    std::filesystem::remove_all(config.data_dir, ec);
  }
  return rc;
}

// Without --port, a config given with --config or -c decides the port
// (storm.zookeeper.port, 2181 by Storm's defaults), as Storm's dev-zookeeper
// does; with neither, a free port.
int PortFromConfig(const GlobalOptions& globals, int& port) {
  if (globals.config_file.empty() && globals.overrides.empty()) return 0;
  absl::StatusOr<api::Config> config = LoadDaemonConfig(globals);
  if (!config.ok()) return Fail(std::string(config.status().message()), 2);
  const int64_t configured = config->GetInt("storm.zookeeper.port", 2181);
  if (configured < 1 || configured > 65535) {
    return Fail(absl::StrCat("storm.zookeeper.port: ", RangeMessage(1, 65535,
                                                                    absl::StrCat(configured))),
                2);
  }
  port = static_cast<int>(configured);
  return 0;
}

}  // namespace

void RegisterDevZookeeperCommand(CLI::App& app, CommandSet& set, GlobalOptions& globals) {
  auto opts = std::make_shared<DevZookeeperOptions>();
  auto* sub = app.add_subcommand(
      "dev-zookeeper", "Run a real standalone ZooKeeper server on 127.0.0.1 in the foreground");
  sub->add_option("--port", opts->port,
                  "client port (default: storm.zookeeper.port when --config or -c is given, "
                  "else a free one)")
      ->check(Bounded(1, 65535));
  sub->add_option("--dir", opts->dir, "data directory (default: a temp dir removed at exit)");
  auto config_options = std::make_shared<SubcommandConfigOptions>(sub, globals);
  set.Add(sub, [opts, config_options, &globals] {
    config_options->Apply();
    if (opts->port == 0) {
      if (int rc = PortFromConfig(globals, opts->port); rc != 0) return rc;
    }
    return RunDevZookeeper(*opts);
  });
}

}  // namespace tempest::cli
