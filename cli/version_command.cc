#include <cstdio>

#include "cli/commands.h"
#include "common/api/api.h"

namespace tempest::cli {

void RegisterVersionCommand(CLI::App& app, CommandSet& set) {
  auto* sub = app.add_subcommand("version", "Print the Tempest version");
  set.Add(sub, [] {
    std::printf("tempest %s (component API %d)\n", api::TempestVersion(), api::kApiVersion);
    return 0;
  });
}

}  // namespace tempest::cli
