// The single `tempest` binary: global options and subcommand dispatch. Each
// subcommand lives in its own *_command.cc and only parses its arguments and
// calls into a library; the logic lives in the modules.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "cli/cli_text.h"
#include "cli/commands.h"
#include "cli/log_format.h"
#include "common/api/api.h"

namespace {

// The first argument that is not a global option or its value: the verb.
const char* FindVerb(int argc, char** argv) {
  static const char* const kWithValue[] = {"--config", "-c", "--nimbus", "--token-file"};
  for (int i = 1; i < argc; ++i) {
    const char* a = argv[i];
    if (a[0] != '-') return a;
    if (std::find_if(std::begin(kWithValue), std::end(kWithValue),
                     [a](const char* o) { return std::strcmp(a, o) == 0; }) !=
        std::end(kWithValue)) {
      ++i;
    }
  }
  return nullptr;
}

// "unknown command 'X'; did you mean 'Y'?" for a verb no subcommand has.
bool ReportUnknownVerb(CLI::App& app, int argc, char** argv) {
  const char* verb = FindVerb(argc, argv);
  if (verb == nullptr) return false;
  std::vector<std::string> names;
  for (CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; })) {
    if (sub->get_name() == verb) return false;
    names.push_back(sub->get_name());
  }
  std::fprintf(stderr, "tempest: %s\n", tempest::cli::UnknownCommandMessage(verb, names).c_str());
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  tempest::cli::InstallEscapingLogFormatter();
  CLI::App app{"tempest: a Storm-style stream-processing runtime"};
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
                 "nimbus HOST:PORT for client verbs (default: $TEMPEST_NIMBUS, else the first "
                 "nimbus.seeds and ui.port of the config)");
  app.add_option("--token-file", globals.token_file,
                 "client verbs: file holding nimbus's API token (default: the config's "
                 "tempest.api.token.file, else the file $TEMPEST_TOKEN_FILE names, else "
                 "$TEMPEST_TOKEN, else the token file `tempest dev` recorded for a nimbus "
                 "on this machine)");
  app.add_flag("--verbose", globals.verbose,
               "client verbs: show the ZooKeeper client's own log lines too");

  auto commands = tempest::cli::RegisterCommands(app, globals);
  if (ReportUnknownVerb(app, argc, argv)) return 2;
  try {
    app.parse(argc, argv);
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
