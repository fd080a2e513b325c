#include "common/core/flux_loader.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <sstream>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/api/string_view_compat.h"
#include "common/core/yaml_value.h"
#include "yaml-cpp/yaml.h"

namespace tempest::core {
namespace {

using api::Sv;
namespace fs = std::filesystem;

constexpr std::string_view kPartialKeyGroupingClass =
    "org.apache.storm.grouping.PartialKeyGrouping";
constexpr std::string_view kFieldsClass = "org.apache.storm.tuple.Fields";

// ---------------------------------------------------------------------------
// Intermediate form: one parsed file, references still unresolved.

// One constructor/config-method argument or property value.
struct RawArg {
  enum class Kind { kValue, kRef, kRefList };
  Kind kind = Kind::kValue;
  api::Value value;
  std::vector<std::string> ids;  // kRef: one; kRefList: many
  SourceLocation loc;
};

struct RawBean {
  std::string id;
  std::string class_name;
  std::vector<RawArg> constructor_args;
  std::vector<std::pair<std::string, RawArg>> properties;
  std::vector<std::pair<std::string, std::vector<RawArg>>> config_methods;
  SourceLocation loc;
};

struct RawVertex {
  RawBean bean;
  ComponentDef::Kind kind = ComponentDef::Kind::kBolt;
  int parallelism = 1;
  int num_tasks = -1;
  api::Config config;
};

struct RawStream {
  StreamDef def;
  std::optional<RawBean> custom;
};

struct RawInclude {
  bool resource = false;
  std::string file;
  bool override_values = false;
  SourceLocation loc;
};

struct RawFile {
  std::string path;
  std::optional<std::string> name;
  api::Config config;
  std::vector<RawBean> components;
  std::vector<RawVertex> spouts;
  std::vector<RawVertex> bolts;
  std::vector<RawStream> streams;
  std::vector<RawInclude> includes;
  SourceLocation loc;
};

// Collects "file:line: message" diagnostics.
class Diagnostics {
 public:
  void Error(const SourceLocation& loc, std::string_view msg) {
    errors_.push_back(absl::StrCat(loc.Prefix(), Sv(msg)));
  }
  void Warning(const SourceLocation& loc, std::string_view msg) {
    warnings_.push_back(absl::StrCat(loc.Prefix(), Sv(msg)));
  }
  bool ok() const { return errors_.empty(); }
  absl::Status ToStatus() const {
    if (errors_.empty()) return absl::OkStatus();
    return absl::InvalidArgumentError(absl::StrJoin(errors_, "\n"));
  }
  std::vector<std::string>& warnings() { return warnings_; }

 private:
  std::vector<std::string> errors_;
  std::vector<std::string> warnings_;
};

// ---------------------------------------------------------------------------
// Text helpers.

absl::StatusOr<std::string> ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat(path, ": cannot read file"));
  std::stringstream buf;
  buf << in.rdbuf();
  return buf.str();
}

int LineAt(std::string_view text, size_t pos) {
  int line = 1;
  for (size_t i = 0; i < pos && i < text.size(); ++i) {
    if (text[i] == '\n') ++line;
  }
  return line;
}

// Replaces ${key} / ${ENV-NAME}; reports unresolved placeholders when a
// filter is active. Lines that are YAML comments are left alone.
std::string Substitute(std::string_view text, const std::string& file,
                       const std::map<std::string, std::string>* props, bool env_filter,
                       const std::map<std::string, std::string>* env, Diagnostics& diag) {
  const bool active = props != nullptr || env_filter;
  std::string out;
  out.reserve(text.size());
  size_t i = 0;
  bool line_is_comment = false;
  bool at_line_start = true;
  while (i < text.size()) {
    char c = text[i];
    if (at_line_start && c != ' ' && c != '\t') {
      line_is_comment = c == '#';
      at_line_start = false;
    }
    if (c == '\n') {
      at_line_start = true;
      line_is_comment = false;
    }
    if (!active || line_is_comment || c != '$' || i + 1 >= text.size() || text[i + 1] != '{') {
      out.push_back(c);
      ++i;
      continue;
    }
    size_t close = text.find('}', i + 2);
    size_t newline = text.find('\n', i + 2);
    if (close == std::string_view::npos || (newline != std::string_view::npos && newline < close)) {
      out.push_back(c);
      ++i;
      continue;
    }
    std::string key(text.substr(i + 2, close - i - 2));
    std::optional<std::string> replacement;
    if (key.starts_with("ENV-")) {
      if (env_filter) {
        std::string name = key.substr(4);
        if (env != nullptr) {
          auto it = env->find(name);
          if (it != env->end()) replacement = it->second;
        } else if (const char* v = std::getenv(name.c_str())) {
          replacement = v;
        }
      }
    } else if (props != nullptr) {
      auto it = props->find(key);
      if (it != props->end()) replacement = it->second;
    }
    if (!replacement) {
      std::string hint;
      if (key.starts_with("ENV-") && !env_filter) {
        hint = " (environment substitution needs --env-filter)";
      } else if (key.starts_with("ENV-")) {
        hint = " (environment variable not set)";
      } else if (props == nullptr) {
        hint = " (no --filter properties file given)";
      } else {
        hint = " (no such key in the --filter properties file)";
      }
      diag.Error(SourceLocation{file, LineAt(text, i)},
                 absl::StrCat("unresolved ${", key, "}", hint));
      out.append(text.substr(i, close - i + 1));
    } else {
      out.append(*replacement);
    }
    i = close + 1;
  }
  return out;
}

// ---------------------------------------------------------------------------
// YAML → raw model.

class FileParser {
 public:
  FileParser(std::string path, Diagnostics& diag) : path_(std::move(path)), diag_(diag) {}

  RawFile Parse(const YAML::Node& root) {
    RawFile file;
    file.path = path_;
    file.loc = Loc(root);
    if (!root.IsMap()) {
      diag_.Error(SourceLocation{path_, Loc(root).line},
                  "a Flux file must be a map with name, spouts, bolts and streams");
      return file;
    }
    for (const auto& kv : root) {
      const std::string key = kv.first.Scalar();
      const YAML::Node& v = kv.second;
      if (key == "name") {
        if (auto s = ScalarString(v, "name")) file.name = *s;
      } else if (key == "config") {
        file.config = ConfigMap(v, "config");
      } else if (key == "components") {
        for (const YAML::Node& n : List(v, "components")) {
          if (auto b = Bean(n, "component", /*needs_id=*/true)) file.components.push_back(*b);
        }
      } else if (key == "spouts" || key == "bolts") {
        const bool spout = key == "spouts";
        for (const YAML::Node& n : List(v, key)) {
          if (auto vx = Vertex(n, spout)) (spout ? file.spouts : file.bolts).push_back(*vx);
        }
      } else if (key == "streams") {
        for (const YAML::Node& n : List(v, "streams")) {
          if (auto s = Stream(n)) file.streams.push_back(*s);
        }
      } else if (key == "includes") {
        for (const YAML::Node& n : List(v, "includes")) {
          if (auto inc = Include(n)) file.includes.push_back(*inc);
        }
      } else if (key == "workerHooks") {
        diag_.Warning(Loc(kv.first), "workerHooks are not supported and are ignored");
      } else if (key == "topologySource") {
        diag_.Error(Loc(kv.first),
                    "topologySource is not supported (declare spouts, bolts and streams)");
      } else {
        diag_.Error(Loc(kv.first), absl::StrCat("unknown top-level key '", key, "'"));
      }
    }
    return file;
  }

 private:
  SourceLocation Loc(const YAML::Node& n) const { return SourceLocation{path_, YamlLine(n)}; }

  std::vector<YAML::Node> List(const YAML::Node& n, std::string_view what) {
    std::vector<YAML::Node> out;
    if (n.IsNull()) return out;
    if (!n.IsSequence()) {
      diag_.Error(Loc(n), absl::StrCat("'", Sv(what), "' must be a list"));
      return out;
    }
    for (const YAML::Node& e : n) out.push_back(e);
    return out;
  }

  std::optional<std::string> ScalarString(const YAML::Node& n, std::string_view what) {
    if (!n.IsScalar()) {
      diag_.Error(Loc(n), absl::StrCat("'", Sv(what), "' must be a string"));
      return std::nullopt;
    }
    return n.Scalar();
  }

  std::optional<int64_t> Int(const YAML::Node& n, std::string_view what) {
    absl::StatusOr<api::Value> v = YamlToValue(n);
    if (v.ok() && n.IsScalar()) {
      if (absl::StatusOr<int64_t> i = v->CoerceInt(); i.ok()) return *i;
    }
    diag_.Error(Loc(n), absl::StrCat("'", Sv(what), "' must be an integer, got '",
                                     n.IsScalar() ? n.Scalar() : std::string("a collection"), "'"));
    return std::nullopt;
  }

  std::optional<bool> Bool(const YAML::Node& n, std::string_view what) {
    absl::StatusOr<api::Value> v = YamlToValue(n);
    if (v.ok() && v->is_bool()) return v->AsBool();
    diag_.Error(Loc(n), absl::StrCat("'", Sv(what), "' must be true or false"));
    return std::nullopt;
  }

  api::Value ToValue(const YAML::Node& n) {
    absl::StatusOr<api::Value> v = YamlToValue(n);
    if (!v.ok()) {
      diag_.Error(Loc(n), api::StdSv(v.status().message()));
      return api::Value();
    }
    return *std::move(v);
  }

  api::Config ConfigMap(const YAML::Node& n, std::string_view what) {
    api::Config config;
    if (n.IsNull()) return config;
    if (!n.IsMap()) {
      diag_.Error(Loc(n), absl::StrCat("'", Sv(what), "' must be a map"));
      return config;
    }
    for (const auto& kv : n) config.Set(kv.first.Scalar(), ToValue(kv.second));
    return config;
  }

  // A constructor / config-method argument: a value, {ref: id} or
  // {reflist: [ids]}.
  RawArg Arg(const YAML::Node& n) {
    RawArg arg;
    arg.loc = Loc(n);
    if (n.IsMap() && n.size() == 1) {
      const auto kv = *n.begin();
      const std::string key = kv.first.Scalar();
      if (key == "ref") {
        arg.kind = RawArg::Kind::kRef;
        if (auto id = ScalarString(kv.second, "ref")) arg.ids.push_back(*id);
        return arg;
      }
      if (key == "reflist") {
        arg.kind = RawArg::Kind::kRefList;
        for (const YAML::Node& e : List(kv.second, "reflist")) {
          if (auto id = ScalarString(e, "reflist entry")) arg.ids.push_back(*id);
        }
        return arg;
      }
    }
    arg.value = ToValue(n);
    return arg;
  }

  std::vector<RawArg> Args(const YAML::Node& n, std::string_view what) {
    std::vector<RawArg> out;
    for (const YAML::Node& e : List(n, what)) out.push_back(Arg(e));
    return out;
  }

  // Handles the bean keys shared by components, spouts, bolts and
  // customClass; returns false for a key it does not know.
  bool BeanKey(const std::string& key, const YAML::Node& v, RawBean& bean) {
    if (key == "id") {
      if (auto s = ScalarString(v, "id")) bean.id = *s;
    } else if (key == "className") {
      if (auto s = ScalarString(v, "className")) bean.class_name = *s;
    } else if (key == "constructorArgs") {
      bean.constructor_args = Args(v, "constructorArgs");
    } else if (key == "properties") {
      for (const YAML::Node& p : List(v, "properties")) {
        if (!p.IsMap()) {
          diag_.Error(Loc(p),
                      "a property must be {name: ..., value: ...} or {name: ..., ref: ...}");
          continue;
        }
        std::optional<std::string> name;
        std::optional<RawArg> value;
        for (const auto& pkv : p) {
          const std::string pk = pkv.first.Scalar();
          if (pk == "name") {
            name = ScalarString(pkv.second, "property name");
          } else if (pk == "value") {
            value = RawArg{RawArg::Kind::kValue, ToValue(pkv.second), {}, Loc(pkv.second)};
          } else if (pk == "ref") {
            RawArg r{RawArg::Kind::kRef, api::Value(), {}, Loc(pkv.second)};
            if (auto id = ScalarString(pkv.second, "ref")) r.ids.push_back(*id);
            value = r;
          } else {
            diag_.Error(Loc(pkv.first), absl::StrCat("unknown property key '", pk, "'"));
          }
        }
        if (!name) {
          diag_.Error(Loc(p), "property is missing 'name'");
        } else if (!value) {
          diag_.Error(Loc(p), absl::StrCat("property '", *name, "' needs 'value' or 'ref'"));
        } else {
          bean.properties.emplace_back(*name, std::move(*value));
        }
      }
    } else if (key == "configMethods") {
      for (const YAML::Node& m : List(v, "configMethods")) {
        if (!m.IsMap() || !m["name"]) {
          diag_.Error(Loc(m), "a configMethod must be {name: ..., args: [...]}");
          continue;
        }
        std::optional<std::string> name = ScalarString(m["name"], "configMethod name");
        std::vector<RawArg> args;
        if (m["args"]) args = Args(m["args"], "args");
        if (name) bean.config_methods.emplace_back(*name, std::move(args));
      }
    } else if (key == "factory") {
      RawArg f{RawArg::Kind::kValue, ToValue(v), {}, Loc(v)};
      bean.properties.emplace_back("factory", std::move(f));
    } else if (key == "factoryArgs") {
      RawArg f{RawArg::Kind::kValue, ToValue(v), {}, Loc(v)};
      bean.properties.emplace_back("factoryArgs", std::move(f));
    } else {
      return false;
    }
    return true;
  }

  std::optional<RawBean> Bean(const YAML::Node& n, std::string_view what, bool needs_id) {
    if (!n.IsMap()) {
      diag_.Error(Loc(n), absl::StrCat("a ", Sv(what), " must be a map"));
      return std::nullopt;
    }
    RawBean bean;
    bean.loc = Loc(n);
    for (const auto& kv : n) {
      const std::string key = kv.first.Scalar();
      if (!BeanKey(key, kv.second, bean)) {
        diag_.Error(Loc(kv.first), absl::StrCat("unknown key '", key, "' in ", Sv(what)));
      }
    }
    if (needs_id && bean.id.empty()) diag_.Error(bean.loc, absl::StrCat(Sv(what), " has no id"));
    if (bean.class_name.empty()) {
      diag_.Error(bean.loc, absl::StrCat(Sv(what), bean.id.empty() ? "" : " '", bean.id,
                                         bean.id.empty() ? "" : "'", " has no className"));
    }
    return bean;
  }

  std::optional<RawVertex> Vertex(const YAML::Node& n, bool spout) {
    const char* const what = spout ? "spout" : "bolt";
    if (!n.IsMap()) {
      diag_.Error(Loc(n), absl::StrCat("a ", what, " must be a map"));
      return std::nullopt;
    }
    RawVertex vx;
    vx.kind = spout ? ComponentDef::Kind::kSpout : ComponentDef::Kind::kBolt;
    vx.bean.loc = Loc(n);
    for (const auto& kv : n) {
      const std::string key = kv.first.Scalar();
      if (BeanKey(key, kv.second, vx.bean)) continue;
      if (key == "parallelism") {
        if (auto i = Int(kv.second, "parallelism")) vx.parallelism = static_cast<int>(*i);
      } else if (key == "numTasks") {
        if (auto i = Int(kv.second, "numTasks")) vx.num_tasks = static_cast<int>(*i);
      } else if (key == "config") {
        vx.config = ConfigMap(kv.second, "config");
      } else if (key == "onHeapMemoryLoad" || key == "offHeapMemoryLoad" || key == "cpuLoad") {
        // Resource hints for Storm's resource-aware scheduler; not used.
      } else {
        diag_.Error(Loc(kv.first), absl::StrCat("unknown key '", key, "' in ", what));
      }
    }
    if (vx.bean.id.empty()) diag_.Error(vx.bean.loc, absl::StrCat(what, " has no id"));
    if (vx.bean.class_name.empty()) {
      diag_.Error(vx.bean.loc, absl::StrCat(what, " '", vx.bean.id, "' has no className"));
    }
    return vx;
  }

  std::optional<RawStream> Stream(const YAML::Node& n) {
    if (!n.IsMap()) {
      diag_.Error(Loc(n), "a stream must be a map");
      return std::nullopt;
    }
    RawStream s;
    s.def.location = Loc(n);
    bool has_grouping = false;
    for (const auto& kv : n) {
      const std::string key = kv.first.Scalar();
      if (key == "name") {
        if (auto v = ScalarString(kv.second, "name")) s.def.name = *v;
      } else if (key == "from") {
        if (auto v = ScalarString(kv.second, "from")) s.def.from = api::ComponentId(*v);
      } else if (key == "to") {
        if (auto v = ScalarString(kv.second, "to")) s.def.to = api::ComponentId(*v);
      } else if (key == "grouping") {
        has_grouping = true;
        Grouping(kv.second, s);
      } else {
        diag_.Error(Loc(kv.first), absl::StrCat("unknown key '", key, "' in stream"));
      }
    }
    if (s.def.from.value().empty()) diag_.Error(s.def.location, "stream is missing 'from'");
    if (s.def.to.value().empty()) diag_.Error(s.def.location, "stream is missing 'to'");
    if (!has_grouping) diag_.Error(s.def.location, "stream is missing 'grouping'");
    return s;
  }

  void Grouping(const YAML::Node& n, RawStream& s) {
    if (!n.IsMap()) {
      diag_.Error(Loc(n), "'grouping' must be a map with a 'type'");
      return;
    }
    std::optional<std::string> type_name;
    SourceLocation type_loc = Loc(n);
    const YAML::Node* args = nullptr;
    YAML::Node args_node;
    for (const auto& kv : n) {
      const std::string key = kv.first.Scalar();
      if (key == "type") {
        type_name = ScalarString(kv.second, "grouping type");
        type_loc = Loc(kv.second);
      } else if (key == "args") {
        args_node = kv.second;
        args = &args_node;
      } else if (key == "streamId") {
        if (auto v = ScalarString(kv.second, "streamId")) s.def.stream = api::StreamId(*v);
      } else if (key == "customClass") {
        s.custom = Bean(kv.second, "customClass", /*needs_id=*/false);
      } else {
        diag_.Error(Loc(kv.first), absl::StrCat("unknown key '", key, "' in grouping"));
      }
    }
    if (!type_name) {
      diag_.Error(Loc(n), "grouping is missing 'type'");
      return;
    }
    std::optional<GroupingType> type = ParseGroupingType(*type_name);
    if (!type) {
      diag_.Error(type_loc, absl::StrCat("unknown grouping type '", *type_name,
                                         "' (expected one of SHUFFLE, FIELDS, ALL, GLOBAL, NONE, "
                                         "DIRECT, LOCAL_OR_SHUFFLE, PARTIAL_KEY, CUSTOM)"));
      return;
    }
    s.def.grouping.type = *type;
    if (args != nullptr) {
      for (const YAML::Node& a : List(*args, "args")) {
        if (auto f = ScalarString(a, "grouping field")) s.def.grouping.fields.push_back(*f);
      }
    }
    if (*type == GroupingType::kFields && s.def.grouping.fields.empty()) {
      diag_.Error(Loc(n), "FIELDS grouping needs args (the field names)");
    }
    if (*type == GroupingType::kCustom && !s.custom) {
      diag_.Error(Loc(n), "CUSTOM grouping needs customClass");
    }
  }

  std::optional<RawInclude> Include(const YAML::Node& n) {
    if (!n.IsMap()) {
      diag_.Error(Loc(n), "an include must be {resource: bool, file: path, override: bool}");
      return std::nullopt;
    }
    RawInclude inc;
    inc.loc = Loc(n);
    for (const auto& kv : n) {
      const std::string key = kv.first.Scalar();
      if (key == "resource") {
        inc.resource = Bool(kv.second, "resource").value_or(false);
      } else if (key == "file") {
        inc.file = ScalarString(kv.second, "file").value_or("");
      } else if (key == "override") {
        inc.override_values = Bool(kv.second, "override").value_or(false);
      } else {
        diag_.Error(Loc(kv.first), absl::StrCat("unknown key '", key, "' in include"));
      }
    }
    if (inc.file.empty()) {
      diag_.Error(inc.loc, "include is missing 'file'");
      return std::nullopt;
    }
    return inc;
  }

  std::string path_;
  Diagnostics& diag_;
};

// ---------------------------------------------------------------------------
// Reference resolution.

class Resolver {
 public:
  explicit Resolver(Diagnostics& diag) : diag_(diag) {}

  // Declares every component in order; positions decide "declared earlier".
  void Index(const std::vector<RawBean>& components) {
    for (size_t i = 0; i < components.size(); ++i) {
      const RawBean& b = components[i];
      if (b.id.empty()) continue;
      auto [it, inserted] = position_.emplace(b.id, i);
      if (!inserted) {
        const RawBean& first = components[it->second];
        diag_.Error(b.loc, absl::StrCat("duplicate component id '", b.id, "' (first declared at ",
                                        first.loc.file, ":", first.loc.line, ")"));
      }
    }
    components_ = &components;
  }

  // Builds components in order, each able to reference earlier ones.
  void BuildComponents() {
    for (size_t i = 0; i < components_->size(); ++i) {
      const RawBean& b = (*components_)[i];
      if (b.id.empty() || position_[b.id] != i) continue;
      built_[b.id] = BeanValue(b, i);
    }
  }

  // `limit`: references must point to components before this position
  // (spouts/bolts/streams: every component).
  api::ComponentArgs Args(const RawBean& b, size_t limit) {
    api::ComponentArgs args;
    args.class_name = b.class_name;
    args.id = api::ComponentId(b.id);
    for (const RawArg& a : b.constructor_args) args.constructor_args.push_back(Resolve(a, limit));
    for (const auto& [name, a] : b.properties) args.properties[name] = Resolve(a, limit);
    for (const auto& [name, margs] : b.config_methods) {
      api::ValueList list;
      for (const RawArg& a : margs) list.push_back(Resolve(a, limit));
      args.config_methods.push_back(api::Value(api::ValueMap{{"name", name}, {"args", list}}));
    }
    return args;
  }

  size_t all() const { return components_->size(); }

 private:
  api::Value BeanValue(const RawBean& b, size_t limit) {
    api::ComponentArgs a = Args(b, limit);
    api::ValueMap m;
    m["id"] = b.id;
    m["className"] = b.class_name;
    m["constructorArgs"] = std::move(a.constructor_args);
    m["properties"] = std::move(a.properties);
    m["configMethods"] = std::move(a.config_methods);
    return api::Value(std::move(m));
  }

  api::Value Lookup(const std::string& id, const SourceLocation& loc, size_t limit) {
    auto pos = position_.find(id);
    if (pos == position_.end()) {
      diag_.Error(loc, absl::StrCat("unknown ref '", id, "' (no component with that id)"));
      return api::Value();
    }
    if (pos->second >= limit) {
      const RawBean& target = (*components_)[pos->second];
      diag_.Error(loc, absl::StrCat("ref '", id, "' is used before its declaration at ",
                                    target.loc.file, ":", target.loc.line));
      return api::Value();
    }
    auto it = built_.find(id);
    return it == built_.end() ? api::Value() : it->second;
  }

  api::Value Resolve(const RawArg& a, size_t limit) {
    switch (a.kind) {
      case RawArg::Kind::kValue:
        return a.value;
      case RawArg::Kind::kRef:
        return a.ids.empty() ? api::Value() : Lookup(a.ids[0], a.loc, limit);
      case RawArg::Kind::kRefList: {
        api::ValueList list;
        for (const std::string& id : a.ids) list.push_back(Lookup(id, a.loc, limit));
        return api::Value(std::move(list));
      }
    }
    return api::Value();
  }

  Diagnostics& diag_;
  const std::vector<RawBean>* components_ = nullptr;
  std::map<std::string, size_t> position_;
  std::map<std::string, api::Value> built_;
};

// Storm's PartialKeyGrouping as a CUSTOM grouping: take the field names
// from its constructor argument (a Fields component, a list, or strings).
void MapStormPartialKey(GroupingDef& g) {
  if (g.type != GroupingType::kCustom || g.custom.class_name != kPartialKeyGroupingClass) return;
  g.type = GroupingType::kPartialKey;
  std::vector<std::string> fields;
  auto add = [&fields](const api::Value& v, auto& self) -> void {
    if (const std::string* s = v.TryString()) {
      fields.push_back(*s);
    } else if (const api::ValueList* l = v.TryList()) {
      for (const api::Value& e : *l) self(e, self);
    } else if (const api::Value* cls = v.Find("className");
               cls != nullptr && cls->TryString() && *cls->TryString() == kFieldsClass) {
      if (const api::Value* ctor = v.Find("constructorArgs")) self(*ctor, self);
    }
  };
  for (const api::Value& a : g.custom.constructor_args) add(a, add);
  g.fields = std::move(fields);
  g.custom = api::ComponentArgs();
}

const std::string& IdOf(const RawBean& b) { return b.id; }
const std::string& IdOf(const RawVertex& v) { return v.bean.id; }
const SourceLocation& LocOf(const RawBean& b) { return b.loc; }
const SourceLocation& LocOf(const RawVertex& v) { return v.bean.loc; }

// Definitions gathered from includes, each marked with whether its include
// said `override: true`.
template <typename T>
using Included = std::vector<std::pair<T, bool>>;

// Adds one include's items: an id already brought by an earlier include is
// replaced only when this include overrides.
template <typename T>
void AddIncluded(Included<T>& acc, std::vector<T>& items, bool override_values) {
  const size_t prior = acc.size();
  for (T& item : items) {
    auto end = acc.begin() + static_cast<std::ptrdiff_t>(prior);
    auto it = std::find_if(acc.begin(), end, [&](const std::pair<T, bool>& x) {
      return !IdOf(item).empty() && IdOf(x.first) == IdOf(item);
    });
    if (it == end) {
      acc.emplace_back(std::move(item), override_values);
    } else if (override_values) {
      *it = {std::move(item), true};
    }
  }
}

// Included items first (so the including file may reference them), then the
// file's own. On an id clash an overriding include wins, else the file's own.
template <typename T>
std::vector<T> MergeWithOwn(Included<T> included, std::vector<T> own, Diagnostics& diag,
                            std::string_view what) {
  std::set<std::string> drop_included, drop_own;
  for (const T& o : own) {
    for (const auto& [inc, overrides] : included) {
      if (IdOf(o).empty() || IdOf(inc) != IdOf(o)) continue;
      if (overrides) {
        drop_own.insert(IdOf(o));
        diag.Warning(LocOf(o), absl::StrCat(Sv(what), " '", IdOf(o),
                                            "' is replaced by an overriding include"));
      } else {
        drop_included.insert(IdOf(o));
        diag.Warning(LocOf(inc),
                     absl::StrCat(Sv(what), " '", IdOf(o),
                                  "' from this include is shadowed by the including file"));
      }
    }
  }
  std::vector<T> out;
  for (auto& [inc, overrides] : included) {
    if (!drop_included.contains(IdOf(inc))) out.push_back(std::move(inc));
  }
  for (T& o : own) {
    if (!drop_own.contains(IdOf(o))) out.push_back(std::move(o));
  }
  return out;
}

}  // namespace

// ---------------------------------------------------------------------------

std::map<std::string, std::string> FluxLoader::ParseProperties(std::string_view text) {
  std::map<std::string, std::string> out;
  std::istringstream in{std::string(text)};
  std::string line, logical;
  while (std::getline(in, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    std::string_view trimmed = api::StdSv(absl::StripLeadingAsciiWhitespace(line));
    if (logical.empty() && (trimmed.empty() || trimmed[0] == '#' || trimmed[0] == '!')) continue;
    // A line ending in an odd number of backslashes continues.
    size_t slashes = 0;
    while (slashes < trimmed.size() && trimmed[trimmed.size() - 1 - slashes] == '\\') ++slashes;
    if (slashes % 2 == 1) {
      logical.append(trimmed.substr(0, trimmed.size() - 1));
      continue;
    }
    logical.append(trimmed);
    size_t sep = logical.find_first_of("=: \t");
    std::string key = logical.substr(0, sep);
    std::string value;
    if (sep != std::string::npos) {
      size_t v = logical.find_first_not_of(" \t", sep);
      if (v != std::string::npos && (logical[v] == '=' || logical[v] == ':') &&
          logical[sep] != '=' && logical[sep] != ':') {
        ++v;
      } else if (v != std::string::npos && v == sep) {
        ++v;
      }
      if (v != std::string::npos) v = logical.find_first_not_of(" \t", v);
      if (v != std::string::npos) value = logical.substr(v);
    }
    out[key] = value;
    logical.clear();
  }
  return out;
}

absl::StatusOr<TopologyDef> FluxLoader::LoadFile(const std::string& path) const {
  absl::StatusOr<std::string> text = ReadFile(path);
  if (!text.ok()) return text.status();
  return LoadString(*text, path);
}

absl::StatusOr<std::optional<std::map<std::string, std::string>>> FluxLoader::FilterProperties()
    const {
  if (options_.filter_file.empty()) return std::optional<std::map<std::string, std::string>>();
  absl::StatusOr<std::string> ptext = ReadFile(options_.filter_file);
  if (!ptext.ok()) {
    return absl::NotFoundError(
        absl::StrCat(options_.filter_file, ": cannot read --filter properties file"));
  }
  return std::optional<std::map<std::string, std::string>>(ParseProperties(*ptext));
}

absl::StatusOr<std::string> FluxLoader::ApplyFilters(std::string_view text,
                                                     const std::string& file_name) const {
  absl::StatusOr<std::optional<std::map<std::string, std::string>>> props = FilterProperties();
  if (!props.ok()) return props.status();
  Diagnostics diag;
  std::string out = Substitute(text, file_name, *props ? &**props : nullptr, options_.env_filter,
                               options_.env, diag);
  if (!diag.ok()) return diag.ToStatus();
  return out;
}

absl::StatusOr<TopologyDef> FluxLoader::LoadString(std::string_view text,
                                                   const std::string& file_name) const {
  Diagnostics diag;

  absl::StatusOr<std::optional<std::map<std::string, std::string>>> filter = FilterProperties();
  if (!filter.ok()) return filter.status();
  const std::optional<std::map<std::string, std::string>>& props = *filter;

  // Parses one file (substitution, YAML, raw model). nullopt on a fatal
  // error (already recorded).
  auto parse = [&](std::string_view body, const std::string& path) -> std::optional<RawFile> {
    std::string substituted =
        Substitute(body, path, props ? &*props : nullptr, options_.env_filter, options_.env, diag);
    YAML::Node root;
    try {
      root = YAML::Load(substituted);
    } catch (const YAML::Exception& e) {
      // yaml-cpp marks errors at end of input one line past the last line.
      int line = e.mark.is_null() ? 0 : e.mark.line + 1;
      int last_line = static_cast<int>(std::count(substituted.begin(), substituted.end(), '\n'));
      if (!substituted.empty() && substituted.back() != '\n') ++last_line;
      if (line > last_line) line = last_line;
      diag.Error(SourceLocation{path, line}, absl::StrCat("YAML syntax error: ", e.msg));
      return std::nullopt;
    } catch (const std::exception& e) {
      diag.Error(SourceLocation{path, 0}, absl::StrCat("YAML error: ", e.what()));
      return std::nullopt;
    }
    try {
      return FileParser(path, diag).Parse(root);
    } catch (const std::exception& e) {
      // yaml-cpp may throw on odd documents (e.g. non-scalar keys).
      diag.Error(SourceLocation{path, 0}, absl::StrCat("malformed Flux document: ", e.what()));
      return std::nullopt;
    }
  };

  std::optional<RawFile> main = parse(text, file_name);
  if (!main) return diag.ToStatus();

  // Includes: one level, in order.
  const fs::path base = fs::path(file_name).parent_path();
  Included<RawBean> inc_components;
  Included<RawVertex> inc_spouts, inc_bolts;
  std::vector<RawStream> streams;
  api::Config inc_config;
  std::set<std::string> overriding_keys;
  std::optional<std::string> inc_name;
  for (const RawInclude& inc : main->includes) {
    std::vector<fs::path> candidates;
    fs::path file(inc.file);
    if (file.is_absolute()) {
      candidates.push_back(file);
    } else {
      candidates.push_back(base / file);
      if (inc.resource) {
        for (const std::string& dir : options_.resource_dirs) {
          candidates.push_back(fs::path(dir) / file);
        }
      }
    }
    std::optional<std::string> found;
    for (const fs::path& c : candidates) {
      std::error_code ec;
      if (fs::is_regular_file(c, ec)) {
        found = c.string();
        break;
      }
    }
    if (!found) {
      diag.Error(inc.loc, absl::StrCat("include file '", inc.file, "' not found"));
      continue;
    }
    absl::StatusOr<std::string> body = ReadFile(*found);
    if (!body.ok()) {
      diag.Error(inc.loc, absl::StrCat("include file '", inc.file, "' cannot be read"));
      continue;
    }
    std::optional<RawFile> included = parse(*body, *found);
    if (!included) continue;
    if (!included->includes.empty()) {
      diag.Warning(included->includes.front().loc,
                   "includes inside an included file are ignored (includes are not recursive)");
    }
    AddIncluded(inc_components, included->components, inc.override_values);
    AddIncluded(inc_spouts, included->spouts, inc.override_values);
    AddIncluded(inc_bolts, included->bolts, inc.override_values);
    for (RawStream& s : included->streams) streams.push_back(std::move(s));
    for (const auto& [k, v] : included->config.entries()) {
      if (inc.override_values) {
        inc_config.Set(k, v);
        overriding_keys.insert(k);
      } else if (!inc_config.Has(k)) {
        inc_config.Set(k, v);
      }
    }
    if (included->name && (!inc_name || inc.override_values)) inc_name = included->name;
  }

  std::vector<RawBean> components =
      MergeWithOwn(std::move(inc_components), std::move(main->components), diag, "component");
  std::vector<RawVertex> spouts =
      MergeWithOwn(std::move(inc_spouts), std::move(main->spouts), diag, "spout");
  std::vector<RawVertex> bolts =
      MergeWithOwn(std::move(inc_bolts), std::move(main->bolts), diag, "bolt");
  for (RawStream& s : main->streams) streams.push_back(std::move(s));

  TopologyDef def;
  def.location = SourceLocation{file_name, 0};
  def.name = main->name.value_or(inc_name.value_or(""));
  def.config = inc_config;
  for (const auto& [k, v] : main->config.entries()) {
    if (!overriding_keys.contains(k)) def.config.Set(k, v);
  }

  Resolver resolver(diag);
  resolver.Index(components);
  resolver.BuildComponents();
  for (auto* list : {&spouts, &bolts}) {
    for (const RawVertex& v : *list) {
      ComponentDef c;
      c.kind = v.kind;
      c.id = api::ComponentId(v.bean.id);
      c.args = resolver.Args(v.bean, resolver.all());
      c.parallelism = v.parallelism;
      c.num_tasks = v.num_tasks;
      c.config = v.config;
      c.location = v.bean.loc;
      (v.kind == ComponentDef::Kind::kSpout ? def.spouts : def.bolts).push_back(std::move(c));
    }
  }
  for (RawStream& s : streams) {
    if (s.custom) s.def.grouping.custom = resolver.Args(*s.custom, resolver.all());
    MapStormPartialKey(s.def.grouping);
    def.streams.push_back(std::move(s.def));
  }
  def.warnings = std::move(diag.warnings());
  if (!diag.ok()) return diag.ToStatus();
  return def;
}

}  // namespace tempest::core
