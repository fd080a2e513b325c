#include "common/core/flux/flux_writer.h"

#include <cmath>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "yaml-cpp/yaml.h"

namespace tempest::core::flux_internal {
namespace {

// A double in a form the loader reads back as the same double (YAML 1.1
// floats need a '.' or an exponent; infinities and NaN have their own words).
std::string DoubleText(double d) {
  if (std::isnan(d)) return ".nan";
  if (std::isinf(d)) return d > 0 ? ".inf" : "-.inf";
  std::string text = absl::StrFormat("%.17g", d);
  if (text.find_first_of(".eE") == std::string::npos) text += ".0";
  return text;
}

void EmitString(YAML::Emitter& out, const std::string& s) {
  out << YAML::DoubleQuoted << s;
}

void EmitValue(YAML::Emitter& out, const api::Value& v) {
  switch (v.type()) {
    case api::Value::Type::kNil:
      out << YAML::Null;
      return;
    case api::Value::Type::kBool:
      out << v.AsBool();
      return;
    case api::Value::Type::kInt:
      out << v.AsInt();
      return;
    case api::Value::Type::kDouble:
      out << DoubleText(v.AsDouble());
      return;
    case api::Value::Type::kString:
      EmitString(out, v.AsString());
      return;
    case api::Value::Type::kBytes:
      EmitString(out, v.AsBytes());
      return;
    case api::Value::Type::kList:
      out << YAML::BeginSeq;
      for (const api::Value& e : v.AsList()) EmitValue(out, e);
      out << YAML::EndSeq;
      return;
    case api::Value::Type::kMap:
      out << YAML::BeginMap;
      for (const auto& [k, e] : v.AsMap()) {
        out << YAML::Key;
        EmitString(out, k);
        out << YAML::Value;
        EmitValue(out, e);
      }
      out << YAML::EndMap;
      return;
  }
}

void EmitConfig(YAML::Emitter& out, const api::Config& config) {
  out << YAML::BeginMap;
  for (const auto& [k, v] : config.entries()) {
    out << YAML::Key;
    EmitString(out, k);
    out << YAML::Value;
    EmitValue(out, v);
  }
  out << YAML::EndMap;
}

void EmitIds(YAML::Emitter& out, const std::vector<std::string>& ids) {
  out << YAML::BeginSeq;
  for (const std::string& id : ids) EmitString(out, id);
  out << YAML::EndSeq;
}

// A constructor or config-method argument: a value, {ref: id} or {reflist: [...]}.
void EmitArg(YAML::Emitter& out, const RawArg& arg) {
  if (arg.kind == RawArg::Kind::kValue) {
    EmitValue(out, arg.value);
    return;
  }
  out << YAML::BeginMap << YAML::Key;
  if (arg.kind == RawArg::Kind::kRef) {
    out << "ref" << YAML::Value;
    EmitString(out, arg.ids.empty() ? std::string() : arg.ids.front());
  } else {
    out << "reflist" << YAML::Value;
    EmitIds(out, arg.ids);
  }
  out << YAML::EndMap;
}

void EmitArgs(YAML::Emitter& out, const std::vector<RawArg>& args) {
  out << YAML::BeginSeq;
  for (const RawArg& a : args) EmitArg(out, a);
  out << YAML::EndSeq;
}

// The keys every bean shares, inside an open map. `factory` and
// `factoryArgs` are properties in the raw model, and go back as properties
// of that name, which the loader reads the same way.
void EmitBeanKeys(YAML::Emitter& out, const RawBean& bean) {
  if (!bean.id.empty()) {
    out << YAML::Key << "id" << YAML::Value;
    EmitString(out, bean.id);
  }
  out << YAML::Key << "className" << YAML::Value;
  EmitString(out, bean.class_name);
  if (!bean.constructor_args.empty()) {
    out << YAML::Key << "constructorArgs" << YAML::Value;
    EmitArgs(out, bean.constructor_args);
  }
  if (!bean.properties.empty()) {
    out << YAML::Key << "properties" << YAML::Value << YAML::BeginSeq;
    for (const auto& [name, arg] : bean.properties) {
      out << YAML::BeginMap << YAML::Key << "name" << YAML::Value;
      EmitString(out, name);
      if (arg.kind == RawArg::Kind::kRef) {
        out << YAML::Key << "ref" << YAML::Value;
        EmitString(out, arg.ids.empty() ? std::string() : arg.ids.front());
      } else {
        out << YAML::Key << "value" << YAML::Value;
        EmitValue(out, arg.value);
      }
      out << YAML::EndMap;
    }
    out << YAML::EndSeq;
  }
  if (!bean.config_methods.empty()) {
    out << YAML::Key << "configMethods" << YAML::Value << YAML::BeginSeq;
    for (const auto& [name, args] : bean.config_methods) {
      out << YAML::BeginMap << YAML::Key << "name" << YAML::Value;
      EmitString(out, name);
      out << YAML::Key << "args" << YAML::Value;
      EmitArgs(out, args);
      out << YAML::EndMap;
    }
    out << YAML::EndSeq;
  }
}

void EmitVertex(YAML::Emitter& out, const RawVertex& v) {
  out << YAML::BeginMap;
  EmitBeanKeys(out, v.bean);
  out << YAML::Key << "parallelism" << YAML::Value << v.parallelism;
  if (v.num_tasks >= 0) out << YAML::Key << "numTasks" << YAML::Value << v.num_tasks;
  if (!v.config.entries().empty()) {
    out << YAML::Key << "config" << YAML::Value;
    EmitConfig(out, v.config);
  }
  out << YAML::EndMap;
}

void EmitStream(YAML::Emitter& out, const RawStream& s) {
  out << YAML::BeginMap;
  if (!s.def.name.empty()) {
    out << YAML::Key << "name" << YAML::Value;
    EmitString(out, s.def.name);
  }
  out << YAML::Key << "from" << YAML::Value;
  EmitString(out, s.def.from.value());
  out << YAML::Key << "to" << YAML::Value;
  EmitString(out, s.def.to.value());
  out << YAML::Key << "grouping" << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "type" << YAML::Value << std::string(GroupingTypeName(s.def.grouping.type));
  if (!s.def.grouping.fields.empty()) {
    out << YAML::Key << "args" << YAML::Value;
    EmitIds(out, s.def.grouping.fields);
  }
  if (s.def.stream != api::DefaultStreamId()) {
    out << YAML::Key << "streamId" << YAML::Value;
    EmitString(out, s.def.stream.value());
  }
  if (s.custom) {
    out << YAML::Key << "customClass" << YAML::Value << YAML::BeginMap;
    EmitBeanKeys(out, *s.custom);
    out << YAML::EndMap;
  }
  out << YAML::EndMap << YAML::EndMap;
}

}  // namespace

std::string WriteFluxFile(const RawFile& file, std::string_view header) {
  YAML::Emitter out;
  out << YAML::BeginMap;
  if (file.name) {
    out << YAML::Key << "name" << YAML::Value;
    EmitString(out, *file.name);
  }
  if (!file.config.entries().empty()) {
    out << YAML::Key << "config" << YAML::Value;
    EmitConfig(out, file.config);
  }
  if (!file.components.empty()) {
    out << YAML::Key << "components" << YAML::Value << YAML::BeginSeq;
    for (const RawBean& b : file.components) {
      out << YAML::BeginMap;
      EmitBeanKeys(out, b);
      out << YAML::EndMap;
    }
    out << YAML::EndSeq;
  }
  for (const auto& [key, list] : {std::pair{"spouts", &file.spouts}, {"bolts", &file.bolts}}) {
    if (list->empty()) continue;
    out << YAML::Key << key << YAML::Value << YAML::BeginSeq;
    for (const RawVertex& v : *list) EmitVertex(out, v);
    out << YAML::EndSeq;
  }
  if (!file.streams.empty()) {
    out << YAML::Key << "streams" << YAML::Value << YAML::BeginSeq;
    for (const RawStream& s : file.streams) EmitStream(out, s);
    out << YAML::EndSeq;
  }
  out << YAML::EndMap;
  std::string text;
  for (size_t start = 0; start < header.size();) {
    size_t end = header.find('\n', start);
    if (end == std::string_view::npos) end = header.size();
    absl::StrAppend(&text, "# ", std::string(header.substr(start, end - start)), "\n");
    start = end + 1;
  }
  absl::StrAppend(&text, out.c_str(), "\n");
  return text;
}

}  // namespace tempest::core::flux_internal
