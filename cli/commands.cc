#include "cli/commands.h"

#include <signal.h>

#include <cstdio>

namespace tempest::cli {

int CommandSet::Run() const {
  for (const auto& e : entries_) {
    if (e.sub->parsed()) return e.run();
  }
  return Fail("no subcommand given", 2);
}

CommandSet RegisterCommands(CLI::App& app, GlobalOptions& globals) {
  CommandSet set;
  RegisterVersionCommand(app, set);
  RegisterDevZookeeperCommand(app, set, globals);
  RegisterDevKafkaCommand(app, set, globals);
  RegisterLocalCommand(app, set, globals);
  RegisterVerifyCommand(app, set);
  RegisterOffsetsCommand(app, set, globals);
  RegisterMigrateCommand(app, set);
  RegisterNimbusCommand(app, set, globals);
  RegisterSupervisorCommand(app, set, globals);
  RegisterTopologyCommands(app, set, globals);
  return set;
}

int Fail(const std::string& message, int code) {
  std::fprintf(stderr, "tempest: %s\n", message.c_str());
  return code;
}

void BlockStopSignals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
}

int WaitForStopSignal() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  int sig = 0;
  sigwait(&set, &sig);
  return sig;
}

}  // namespace tempest::cli
