// The single `tempest` binary: global options and subcommand dispatch. Each
// subcommand lives in its own *_command.cc and only parses its arguments and
// calls into a library; the logic lives in the modules.
#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "cli/cli_text.h"
#include "cli/commands.h"
#include "cli/log_format.h"
#include "common/api/api.h"

namespace {

// The first argument that is not a global option or its value: the verb.
int FindVerb(const std::vector<std::string>& args) {
  static const char* const kWithValue[] = {"--config", "-c", "--nimbus", "--token-file"};
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i].empty() || args[i][0] != '-') return static_cast<int>(i);
    if (std::find(std::begin(kWithValue), std::end(kWithValue), args[i]) != std::end(kWithValue)) {
      ++i;
    }
  }
  return -1;
}

// Storm's `storm help [COMMAND]`: `tempest help kill` is `tempest kill
// --help`, `tempest help` is `tempest --help`. The words are checked as any
// command line is (UsageProblem), so `tempest help kil` suggests `kill`.
std::vector<std::string> RewriteHelp(std::vector<std::string> args) {
  const int verb = FindVerb(args);
  if (verb < 0 || args[verb] != "help") return args;
  args.erase(args.begin() + verb);
  args.push_back("--help");
  return args;
}

}  // namespace

int main(int argc, char** argv) {
  tempest::cli::InstallEscapingLogFormatter();
  CLI::App app{"tempest: a Storm-style stream-processing runtime", "tempest"};
  app.require_subcommand(1);
  // Global options work after the subcommand too (`tempest local X --config F`).
  app.fallthrough();
  app.set_help_all_flag("--help-all", "Show help for every subcommand");
  app.set_version_flag("--version", std::string("tempest ") + tempest::api::TempestVersion());

  // Every --help shows each option's default (subcommands inherit this).
  app.option_defaults()->always_capture_default();

  tempest::cli::GlobalOptions globals;
  globals.argc = argc;
  globals.argv = argv;
  app.add_option("--config", globals.config_file, "tempest.yaml or storm.yaml to read")
      ->check(CLI::ExistingFile);
  app.add_option("-c", globals.overrides, "key=value config override (value parsed as YAML)")
      ->allow_extra_args(false)
      ->default_str("");
  app.add_option("--nimbus", globals.nimbus,
                 "nimbus HOST:PORT (or http://HOST:PORT) for client verbs (default: "
                 "$TEMPEST_NIMBUS, else the first nimbus.seeds and ui.port of the config)");
  app.add_option("--token-file", globals.token_file,
                 "client verbs: file holding nimbus's API token (default: the config's "
                 "tempest.api.token.file, else the file $TEMPEST_TOKEN_FILE names, else "
                 "$TEMPEST_TOKEN, else the token file `tempest dev` recorded for a nimbus "
                 "on this machine)");
  app.add_flag("--verbose", globals.verbose,
               "client verbs: show the ZooKeeper client's own log lines too");

  auto commands = tempest::cli::RegisterCommands(app, globals);
  // Listed in --help and known to UsageProblem; RewriteHelp answers it.
  app.add_subcommand("help", "Show the help of a command: tempest help COMMAND [SUBCOMMAND]")
      ->add_option("command", "the command (and subcommand) to explain");
  std::vector<std::string> args = RewriteHelp(std::vector<std::string>(argv + 1, argv + argc));
  if (const std::string problem = tempest::cli::UsageProblem(app, args); !problem.empty()) {
    std::fprintf(stderr, "tempest: %s\n", problem.c_str());
    return 2;
  }
  try {
    // CLI11 takes the arguments last to first.
    std::reverse(args.begin(), args.end());
    app.parse(args);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    // One clear line on stderr; usage errors exit 2.
    std::fprintf(stderr, "tempest: %s\n", e.what());
    return 2;
  }
  return commands.Run();
}
