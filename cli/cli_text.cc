#include "cli/cli_text.h"

#include <algorithm>
#include <cmath>
#include <string_view>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "common/api/component_registry.h"
#include "common/core/log_text.h"
#include "nlohmann/json.hpp"

namespace tempest::cli {

std::string FormatNumber(double value) {
  if (std::isfinite(value) && value == std::floor(value) && std::fabs(value) <= 1e18) {
    return absl::StrCat(static_cast<int64_t>(value));
  }
  return absl::StrFormat("%.6g", value);
}

std::string RangeMessage(double min, double max, const std::string& text) {
  return absl::StrCat("must be between ", FormatNumber(min), " and ", FormatNumber(max),
                      " (got ", text, ")");
}

CLI::Validator Bounded(double min, double max) {
  CLI::Validator v(
      [min, max](std::string& input) -> std::string {
        double value = 0;
        const absl::string_view text = absl::StripAsciiWhitespace(input);
        if (!absl::SimpleAtod(text, &value) || !std::isfinite(value) || value < min ||
            value > max) {
          return RangeMessage(min, max, input);
        }
        return std::string();
      },
      absl::StrCat("in [", FormatNumber(min), "..", FormatNumber(max), "]"));
  return v;
}

std::string Printable(std::string_view text) {
  constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    const auto next = i + 1 < text.size() ? static_cast<unsigned char>(text[i + 1]) : 0;
    if (c == 0xc2 && next >= 0x80 && next <= 0x9f) {
      out += "\\u00";
      out += kHex[next >> 4];
      out += kHex[next & 0xf];
      ++i;
    } else if (c < 0x20 || c == 0x7f) {
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 0xf];
    } else {
      out += static_cast<char>(c);
    }
  }
  return out;
}

std::string FormatTable(const std::vector<std::string>& raw_header,
                        const std::vector<std::vector<std::string>>& raw_rows) {
  auto printable = [](const std::vector<std::string>& cells) {
    std::vector<std::string> out;
    out.reserve(cells.size());
    for (const std::string& cell : cells) out.push_back(Printable(cell));
    return out;
  };
  const std::vector<std::string> header = printable(raw_header);
  std::vector<std::vector<std::string>> rows;
  rows.reserve(raw_rows.size());
  for (const auto& row : raw_rows) rows.push_back(printable(row));
  const size_t columns = header.size();
  std::vector<size_t> width(columns, 0);
  for (size_t c = 0; c < columns; ++c) width[c] = header[c].size();
  for (const auto& row : rows) {
    for (size_t c = 0; c < columns && c < row.size(); ++c) width[c] = std::max(width[c], row[c].size());
  }
  auto line = [&](const std::vector<std::string>& cells) {
    std::string out;
    for (size_t c = 0; c < columns; ++c) {
      const std::string cell = c < cells.size() ? cells[c] : std::string();
      if (c + 1 == columns) {
        out += cell;
      } else {
        out += cell;
        out.append(width[c] - cell.size() + 2, ' ');
      }
    }
    // A short last cell leaves no trailing blanks.
    while (!out.empty() && out.back() == ' ') out.pop_back();
    out += '\n';
    return out;
  };
  std::string out = line(header);
  size_t total = 0;
  for (size_t c = 0; c < columns; ++c) total += width[c] + (c + 1 < columns ? 2 : 0);
  out.append(total, '-');
  out += '\n';
  for (const auto& row : rows) out += line(row);
  return out;
}

std::string ShellWord(const std::string& text) {
  const bool plain =
      !text.empty() && std::all_of(text.begin(), text.end(), [](char c) {
        return absl::ascii_isalnum(static_cast<unsigned char>(c)) ||
               std::string_view("_./:,@%+=-").find(c) != std::string_view::npos;
      });
  if (plain) return text;
  std::string out = "'";
  for (char c : text) {
    if (c == '\'') {
      out += "'\\''";
    } else {
      out += c;
    }
  }
  return out + "'";
}

std::vector<std::string> DevExportLines(const std::string& nimbus, const std::string& bootstrap,
                                        const std::string& zookeeper,
                                        const std::string& token_file,
                                        const std::string& zk_auth_file) {
  std::vector<std::string> lines = {absl::StrCat("export TEMPEST_NIMBUS=", nimbus),
                                    absl::StrCat("export BOOTSTRAP=", bootstrap),
                                    absl::StrCat("export TEMPEST_ZK=", zookeeper)};
  if (!token_file.empty()) {
    lines.push_back(absl::StrCat("export TEMPEST_TOKEN_FILE=", ShellWord(token_file)));
  }
  if (!zk_auth_file.empty()) {
    lines.push_back(absl::StrCat("export TEMPEST_ZK_AUTH_FILE=", ShellWord(zk_auth_file)));
  }
  return lines;
}

std::string DevUiUrl(const std::string& nimbus, const std::string& token) {
  const size_t colon = nimbus.rfind(':');
  std::string host = colon == std::string::npos ? nimbus : nimbus.substr(0, colon);
  const std::string port = colon == std::string::npos ? "" : nimbus.substr(colon);
  if (host.empty() || host == "0.0.0.0" || host == "::" || host == "[::]") host = "127.0.0.1";
  if (host.find(':') != std::string::npos && host.front() != '[') host = "[" + host + "]";
  std::string url = absl::StrCat("http://", host, port, "/");
  if (token.empty()) return url;
  url += "#token=";
  for (const char c : token) {
    const auto u = static_cast<unsigned char>(c);
    if (absl::ascii_isalnum(u) || c == '-' || c == '.' || c == '_' || c == '~') {
      url += c;
    } else {
      url += absl::StrFormat("%%%02X", u);
    }
  }
  return url;
}

std::string RunningWaitReason(const RunningProgress& p) {
  if (p.supervisors == 0) return "no supervisor is registered; waiting";
  if (p.workers_assigned == 0) {
    if (p.slots_free == 0) {
      return absl::StrCat("0 free slots of ", std::max(p.slots_total, 0), "; waiting");
    }
    if (p.slots_free > 0) {
      return absl::StrCat("not scheduled yet (", core::Counted(p.slots_free, "free slot"), " of ",
                          p.slots_total, "); waiting");
    }
    return "not scheduled yet; waiting";
  }
  if (p.executors_total == 0) return "nimbus has not laid the topology out yet; waiting";
  return absl::StrCat(p.executors_running, "/",
                      core::Counted(p.executors_total, "executor"), " running in ",
                      core::Counted(p.workers_beating, "worker"), "; waiting");
}

absl::StatusOr<std::vector<std::string>> StormRebalanceOverrideNotes(
    const std::string& resources, const std::string& topology_conf) {
  std::vector<std::string> notes;
  const struct {
    const char* flag;
    const std::string& value;
    const char* note;
  } given[] = {
      {"-r", resources,
       "-r (component resources) accepted but not applied: Tempest schedules by worker slots, "
       "not by CPU or memory"},
      {"-t", topology_conf,
       "-t (topology config overrides) accepted but not applied: a running topology keeps its "
       "config; resubmit it with -c key=value to change it"},
  };
  for (const auto& g : given) {
    if (g.value.empty()) continue;
    const nlohmann::json parsed = nlohmann::json::parse(g.value, nullptr, false);
    if (parsed.is_discarded() || !parsed.is_object()) {
      return absl::InvalidArgumentError(
          absl::StrCat(g.flag, " expects a JSON object such as '{\"component\": {...}}', not '",
                       g.value.substr(0, 80), "'"));
    }
    notes.push_back(g.note);
  }
  return notes;
}

std::string ClosestName(const std::string& word, const std::vector<std::string>& names) {
  const std::vector<std::string_view> views(names.begin(), names.end());
  return api::ClosestName(word, views).value_or("");
}

std::string DidYouMean(const std::string& word, const std::vector<std::string>& names) {
  const std::string closest = ClosestName(word, names);
  return closest.empty() ? std::string() : absl::StrCat("; did you mean '", closest, "'?");
}

std::string UnknownCommandMessage(const std::string& word, const std::vector<std::string>& names) {
  return absl::StrCat("unknown command '", word, "'", DidYouMean(word, names),
                      " (tempest --help)");
}

namespace {

// Whether CLI11 reads `arg` as an option rather than a value: "-x", "--name",
// but not "-" nor a negative number.
bool LooksLikeOption(const std::string& arg) {
  return arg.size() >= 2 && arg[0] == '-' &&
         !absl::ascii_isdigit(static_cast<unsigned char>(arg[1]));
}

std::vector<const CLI::App*> Subcommands(const CLI::App& app) {
  return app.get_subcommands([](const CLI::App*) { return true; });
}

const CLI::App* FindSubcommand(const CLI::App& app, const std::string& name) {
  for (const CLI::App* sub : Subcommands(app)) {
    if (sub->check_name(name)) return sub;
  }
  return nullptr;
}

// `app` and the commands above it whose options it accepts (fallthrough).
std::vector<const CLI::App*> OptionScope(const CLI::App& app) {
  std::vector<const CLI::App*> scope = {&app};
  for (const CLI::App* a = &app; a->get_fallthrough() && a->get_parent() != nullptr;) {
    a = a->get_parent();
    scope.push_back(a);
  }
  return scope;
}

const CLI::Option* FindOption(const CLI::App& app, const std::string& name) {
  for (const CLI::App* a : OptionScope(app)) {
    if (const CLI::Option* o = a->get_option_no_throw(name); o != nullptr && o->nonpositional()) {
      return o;
    }
  }
  return nullptr;
}

std::vector<std::string> OptionNames(const CLI::App& app) {
  std::vector<std::string> names;
  for (const CLI::App* a : OptionScope(app)) {
    auto named = [](const CLI::Option* o) { return o->nonpositional(); };
    for (const CLI::Option* o : a->get_options(named)) {
      for (const std::string& l : o->get_lnames()) names.push_back("--" + l);
      for (const std::string& n : o->get_snames()) names.push_back("-" + n);
    }
  }
  return names;
}

bool HasPositionals(const CLI::App& app) {
  return !app.get_options([](const CLI::Option* o) { return o->get_positional(); }).empty();
}

// How many of the words after option `o` (given as `arg`) are its values,
// at most what is left; greedy where CLI11 may take more, so that a value is
// never mistaken for a command.
size_t ValuesTaken(const CLI::Option& o, const std::string& arg, const CLI::App& app,
                   const std::vector<std::string>& rest) {
  if (o.get_items_expected_max() == 0 || arg.find('=') != std::string::npos) return 0;
  const size_t min = static_cast<size_t>(
      std::max(1, std::min(o.get_type_size_min(), o.get_items_expected_min())));
  size_t taken = std::min(min, rest.size());
  const bool more = o.get_allow_extra_args() || o.get_items_expected_max() > static_cast<int>(min);
  while (more && taken < rest.size() && !LooksLikeOption(rest[taken]) &&
         FindSubcommand(app, rest[taken]) == nullptr) {
    ++taken;
  }
  return taken;
}

std::string SubcommandNames(const CLI::App& app) {
  std::vector<std::string> names;
  for (const CLI::App* sub : Subcommands(app)) {
    if (!sub->get_group().empty()) names.push_back(sub->get_name());
  }
  return absl::StrJoin(names, ", ");
}

}  // namespace

std::string UsageProblem(const CLI::App& root, const std::vector<std::string>& args) {
  const CLI::App* app = &root;
  std::string path = "tempest";
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg == "--") return "";
    if (LooksLikeOption(arg)) {
      const std::string name = arg.substr(0, arg.find('='));
      const CLI::Option* o = FindOption(*app, name);
      bool attached = false;
      if (o == nullptr && arg[1] != '-' && arg.size() > 2) {  // -n5: -n with its value
        o = FindOption(*app, arg.substr(0, 2));
        attached = true;
      }
      if (o == nullptr) {
        return absl::StrCat("unknown option '", name, "' for '", path, "'",
                            DidYouMean(name, OptionNames(*app)), " (", path, " --help)");
      }
      if (name == "-h" || name == "--help" || name == "--help-all" || name == "--version") {
        return "";  // CLI11 answers these whatever else is wrong
      }
      if (!attached) {
        const std::vector<std::string> rest(args.begin() + static_cast<long>(i) + 1, args.end());
        i += ValuesTaken(*o, arg, *app, rest);
      }
      continue;
    }
    if (const CLI::App* sub = FindSubcommand(*app, arg); sub != nullptr) {
      app = sub;
      path = absl::StrCat(path, " ", sub->get_name());
      if (sub->get_prefix_command()) return "";  // the rest is the command's own
      continue;
    }
    if (Subcommands(*app).empty() || HasPositionals(*app)) continue;  // a value of `app`
    std::vector<std::string> names;
    for (const CLI::App* s : Subcommands(*app)) names.push_back(s->get_name());
    if (app == &root) return UnknownCommandMessage(arg, names);
    return absl::StrCat("unknown subcommand '", arg, "' of '", path, "'", DidYouMean(arg, names),
                        " (", path, " --help)");
  }
  if (app->get_require_subcommand_min() > 0) {
    if (app == &root) return "a command is required; tempest help lists them";
    return absl::StrCat("'", path, "' needs a subcommand: ", SubcommandNames(*app), " (", path,
                        " --help)");
  }
  return "";
}

}  // namespace tempest::cli
