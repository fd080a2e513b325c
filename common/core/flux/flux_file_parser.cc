#include "common/core/flux/flux_file_parser.h"

#include <algorithm>
#include <exception>
#include <limits>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/api/string_view_compat.h"
#include "common/core/yaml_checks.h"
#include "common/core/yaml_value.h"
#include "yaml-cpp/yaml.h"

namespace tempest::core::flux_internal {
namespace {

using api::Sv;

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

  // An integer that fits an int, never truncated (2^32+1 is an error, not 1).
  std::optional<int> Int32(const YAML::Node& n, std::string_view what) {
    std::optional<int64_t> i = Int(n, what);
    if (!i) return std::nullopt;
    if (*i < std::numeric_limits<int>::min() || *i > std::numeric_limits<int>::max()) {
      diag_.Error(Loc(n), absl::StrCat("'", Sv(what), "' ", *i, " is out of range (at most ",
                                       std::numeric_limits<int>::max(), ")"));
      return std::nullopt;
    }
    return static_cast<int>(*i);
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
        if (auto i = Int32(kv.second, "parallelism")) vx.parallelism = *i;
      } else if (key == "numTasks") {
        if (auto i = Int32(kv.second, "numTasks")) vx.num_tasks = *i;
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

}  // namespace

std::optional<RawFile> ParseFluxFile(const std::string& text, const std::string& path,
                                     Diagnostics& diag) {
  absl::StatusOr<YAML::Node> root = LoadCheckedYaml(text, path);
  if (!root.ok()) {
    diag.Raw(std::string(root.status().message()));
    return std::nullopt;
  }
  try {
    return FileParser(path, diag).Parse(*root);
  } catch (const std::exception& e) {
    // yaml-cpp may throw on odd documents (e.g. non-scalar keys).
    diag.Error(SourceLocation{path, 0}, absl::StrCat("malformed Flux document: ", e.what()));
    return std::nullopt;
  }
}

}  // namespace tempest::core::flux_internal
