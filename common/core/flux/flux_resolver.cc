#include "common/core/flux/flux_resolver.h"

#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"

namespace tempest::core::flux_internal {
namespace {

constexpr std::string_view kPartialKeyGroupingClass =
    "org.apache.storm.grouping.PartialKeyGrouping";
constexpr std::string_view kFieldsClass = "org.apache.storm.tuple.Fields";

// Builds component values and ComponentArgs with references resolved.
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

}  // namespace

void ResolveComponents(RawFile& merged, Diagnostics& diag, TopologyDef& def) {
  Resolver resolver(diag);
  resolver.Index(merged.components);
  resolver.BuildComponents();
  for (auto* list : {&merged.spouts, &merged.bolts}) {
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
  for (RawStream& s : merged.streams) {
    if (s.custom) s.def.grouping.custom = resolver.Args(*s.custom, resolver.all());
    MapStormPartialKey(s.def.grouping);
    def.streams.push_back(std::move(s.def));
  }
}

}  // namespace tempest::core::flux_internal
