#include "common/core/topology_validator.h"

#include <map>
#include <optional>
#include <set>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/api/string_view_compat.h"

namespace tempest::core {
namespace {

using api::Sv;

std::string StreamNames(const std::map<api::StreamId, api::StreamDeclaration>& streams) {
  std::vector<std::string> names;
  for (const auto& [id, decl] : streams) names.push_back(id.value());
  return names.empty() ? "none" : absl::StrJoin(names, ", ");
}

// Instantiates `c` and collects its declared streams.
absl::StatusOr<api::OutputFieldsDeclarer> Declare(const api::ComponentRegistry& registry,
                                                  const ComponentDef& c) {
  api::OutputFieldsDeclarer declarer;
  if (c.kind == ComponentDef::Kind::kSpout) {
    absl::StatusOr<std::unique_ptr<api::Spout>> spout = registry.CreateSpout(c.args);
    if (!spout.ok()) return spout.status();
    (*spout)->DeclareOutputFields(declarer);
  } else {
    absl::StatusOr<std::unique_ptr<api::Bolt>> bolt = registry.CreateBolt(c.args);
    if (!bolt.ok()) return bolt.status();
    (*bolt)->DeclareOutputFields(declarer);
  }
  return declarer;
}

using Declarers = std::map<std::string, api::OutputFieldsDeclarer>;

std::string Describe(const ComponentDef& c) {
  return absl::StrCat(Sv(c.KindName()), " '", c.id.value(), "' (", c.args.class_name, ")");
}

// Fills in the fields of every pass-through stream (DeclarePassThrough) from
// the streams its component consumes, upstream first: a pass-through bolt
// behind another one waits until that one is resolved. Inputs that carry
// different fields, and cycles of pass-through bolts, are errors.
void ResolvePassThrough(const TopologyDef& def, const Declarers& declarers,
                        ComponentStreams& streams, std::vector<std::string>& errors) {
  std::set<std::pair<std::string, api::StreamId>> pending;
  for (const auto& [id, declared] : declarers) {
    for (const api::StreamId& stream : declared.pass_through()) pending.insert({id, stream});
  }
  bool progress = true;
  while (progress && !pending.empty()) {
    progress = false;
    for (auto it = pending.begin(); it != pending.end();) {
      const auto& [id, out_stream] = *it;
      std::optional<api::Fields> fields;
      const StreamDef* first = nullptr;
      bool waiting = false;
      std::string conflicts;
      for (const StreamDef& s : def.streams) {
        if (s.to.value() != id) continue;
        if (pending.contains({s.from.value(), s.stream})) {
          waiting = true;
          break;
        }
        // Unknown components and undeclared streams are reported by Check.
        auto from = streams.find(s.from);
        if (from == streams.end()) continue;
        auto decl = from->second.find(s.stream);
        if (decl == from->second.end()) continue;
        if (!fields) {
          fields = decl->second.fields;
          first = &s;
        } else if (!(*fields == decl->second.fields)) {
          absl::StrAppend(&conflicts, "; ", decl->second.fields.DebugString(), " from '",
                          s.from.value(), "' stream '", s.stream.value(), "'");
        }
      }
      if (waiting) {
        ++it;
        continue;
      }
      const ComponentDef* c = def.FindComponent(api::ComponentId(id));
      if (!conflicts.empty() && c != nullptr) {
        errors.push_back(absl::StrCat(
            c->location.Prefix(), Describe(*c), " passes its input through on stream '",
            out_stream.value(), "', but its inputs carry different fields: ",
            fields->DebugString(), " from '", first->from.value(), "' stream '",
            first->stream.value(), "'", conflicts, "; set its 'fields' property"));
      }
      streams[api::ComponentId(id)][out_stream].fields = fields.value_or(api::Fields());
      it = pending.erase(it);
      progress = true;
    }
  }
  for (const auto& [id, out_stream] : pending) {
    const ComponentDef* c = def.FindComponent(api::ComponentId(id));
    if (c == nullptr) continue;
    errors.push_back(absl::StrCat(c->location.Prefix(), Describe(*c),
                                  " passes its input through, but its inputs form a cycle of "
                                  "pass-through bolts; set its 'fields' property"));
  }
}

// Checks what each bolt said it needs from its inputs (RequireInputFields,
// RequireInputWidth) against the declared fields of every stream it
// consumes, so a wiring mistake fails here and not on every tuple.
void CheckInputRequirements(const TopologyDef& def, const Declarers& declarers,
                            const ComponentStreams& streams, std::vector<std::string>& errors) {
  for (const StreamDef& s : def.streams) {
    auto to = declarers.find(s.to.value());
    if (to == declarers.end()) continue;
    const api::OutputFieldsDeclarer& needs = to->second;
    if (needs.required_input_fields().empty() && !needs.required_input_width()) continue;
    auto from = streams.find(s.from);
    if (from == streams.end()) continue;
    auto decl = from->second.find(s.stream);
    if (decl == from->second.end()) continue;
    const api::Fields& carried = decl->second.fields;
    const ComponentDef* c = def.FindComponent(s.to);
    if (c == nullptr) continue;
    const std::string at = s.location.Prefix();
    const std::string hint =
        needs.required_input_hint().empty() ? "" : absl::StrCat("; ", needs.required_input_hint());
    std::vector<std::string> missing;
    for (const std::string& f : needs.required_input_fields()) {
      if (!carried.Contains(f)) missing.push_back(absl::StrCat("'", f, "'"));
    }
    if (!missing.empty()) {
      errors.push_back(absl::StrCat(at, Describe(*c), " reads field",
                                    missing.size() > 1 ? "s " : " ", absl::StrJoin(missing, ", "),
                                    ", which stream '", s.stream.value(), "' of '",
                                    s.from.value(), "' does not carry ", carried.DebugString(),
                                    hint));
    }
    if (needs.required_input_width() && *needs.required_input_width() != carried.size()) {
      errors.push_back(absl::StrCat(at, Describe(*c), " declares ", *needs.required_input_width(),
                                    " output fields for the values of its input, but stream '",
                                    s.stream.value(), "' of '", s.from.value(), "' carries ",
                                    carried.size(), " ", carried.DebugString(), hint));
    }
  }
}

void CheckConfig(const TopologyDef& def, std::vector<std::string>& errors) {
  const std::string where = def.location.Prefix();
  auto check_int = [&](std::string_view key, int64_t min, bool nullable) {
    const api::Value* v = def.config.Find(key);
    if (v == nullptr) return;
    if (v->is_nil()) {
      if (!nullable) errors.push_back(absl::StrCat(where, "config ", Sv(key), " must not be null"));
      return;
    }
    absl::StatusOr<int64_t> i = v->CoerceInt();
    if (!i.ok() || *i < min) {
      errors.push_back(absl::StrCat(where, "config ", Sv(key), " must be an integer >= ", min,
                                    nullable ? " or null" : "", ", got ", v->DebugString()));
    }
  };
  check_int(api::kTopologyWorkers, 1, false);
  check_int(api::kTopologyAckerExecutors, 0, true);
  check_int(api::kTopologyMessageTimeoutSecs, 1, false);
  check_int(api::kTopologyMaxSpoutPending, 1, true);
  check_int(api::kTopologyTickTupleFreqSecs, 1, true);
  check_int(api::kTopologyMaxTaskParallelism, 1, true);
  for (std::string_view key : {api::kTopologyDebug, api::kTopologyEnableMessageTimeouts}) {
    const api::Value* v = def.config.Find(key);
    if (v != nullptr && !v->is_nil() && !v->CoerceBool().ok()) {
      errors.push_back(
          absl::StrCat(where, "config ", Sv(key), " must be a boolean, got ", v->DebugString()));
    }
  }
}

}  // namespace

absl::Status ValidationReport::ToStatus() const {
  if (errors.empty()) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrJoin(errors, "\n"));
}

ValidationReport TopologyValidator::Check(const TopologyDef& def) const {
  ValidationReport report;
  std::vector<std::string>& errors = report.errors;
  const std::string top = def.location.Prefix();

  if (def.name.empty()) errors.push_back(absl::StrCat(top, "topology has no name"));
  if (def.spouts.empty()) errors.push_back(absl::StrCat(top, "topology has no spouts"));
  CheckConfig(def, errors);

  // Components.
  std::map<std::string, const ComponentDef*> by_id;
  std::set<std::string> instantiated;
  Declarers declarers;
  for (const ComponentDef* c : def.AllComponents()) {
    const std::string at = c->location.Prefix();
    const std::string kind(c->KindName());
    const std::string& id = c->id.value();
    if (id.empty()) {
      errors.push_back(absl::StrCat(at, kind, " has no id"));
    } else if (id.starts_with("__")) {
      errors.push_back(absl::StrCat(
          at, kind, " id '", id, "' is reserved (ids starting with '__' are system components)"));
    } else {
      auto [it, inserted] = by_id.emplace(id, c);
      if (!inserted) {
        errors.push_back(absl::StrCat(at, "duplicate id '", id, "' (first declared at ",
                                      it->second->location.file, ":", it->second->location.line,
                                      ")"));
        continue;
      }
    }
    if (c->parallelism < 1) {
      errors.push_back(
          absl::StrCat(at, kind, " '", id, "': parallelism must be >= 1, got ", c->parallelism));
    }
    if (c->num_tasks == 0 || c->num_tasks < -1) {
      errors.push_back(
          absl::StrCat(at, kind, " '", id, "': numTasks must be >= 1, got ", c->num_tasks));
    }
    if (c->args.class_name.empty()) {
      errors.push_back(absl::StrCat(at, kind, " '", id, "' has no className"));
      continue;
    }
    std::optional<api::ComponentRegistry::Kind> registered = registry_.KindOf(c->args.class_name);
    const auto wanted = c->kind == ComponentDef::Kind::kSpout ? api::ComponentRegistry::Kind::kSpout
                                                              : api::ComponentRegistry::Kind::kBolt;
    if (!registered) {
      errors.push_back(
          absl::StrCat(at, "unknown ", kind, " class '", c->args.class_name, "' for '", id, "'"));
      continue;
    }
    if (*registered != wanted) {
      errors.push_back(
          absl::StrCat(at, "class '", c->args.class_name, "' of '", id, "' is not a ", kind));
      continue;
    }
    absl::StatusOr<api::OutputFieldsDeclarer> declared = Declare(registry_, *c);
    if (!declared.ok()) {
      errors.push_back(absl::StrCat(at, kind, " '", id, "' (", c->args.class_name,
                                    "): ", declared.status().message()));
      continue;
    }
    for (const api::StreamId& dup : declared->duplicates()) {
      errors.push_back(
          absl::StrCat(at, kind, " '", id, "' declares stream '", dup.value(), "' twice"));
    }
    for (const auto& [stream, decl] : declared->streams()) {
      if (decl.fields.HasDuplicates()) {
        errors.push_back(absl::StrCat(at, kind, " '", id, "' stream '", stream.value(),
                                      "' has duplicate field names ", decl.fields.DebugString()));
      }
    }
    report.streams[c->id] = declared->streams();
    instantiated.insert(id);
    declarers.emplace(id, *std::move(declared));
  }
  ResolvePassThrough(def, declarers, report.streams, errors);

  // Streams.
  std::set<std::string> consumers;
  for (const StreamDef& s : def.streams) {
    const std::string at = s.location.Prefix();
    bool endpoints_ok = true;
    if (s.from.value().empty()) {
      errors.push_back(absl::StrCat(at, "stream is missing 'from'"));
      endpoints_ok = false;
    } else if (!by_id.contains(s.from.value())) {
      errors.push_back(absl::StrCat(at, "stream from unknown component '", s.from.value(), "'"));
      endpoints_ok = false;
    }
    if (s.to.value().empty()) {
      errors.push_back(absl::StrCat(at, "stream is missing 'to'"));
      endpoints_ok = false;
    } else if (auto it = by_id.find(s.to.value()); it == by_id.end()) {
      errors.push_back(absl::StrCat(at, "stream to unknown component '", s.to.value(), "'"));
      endpoints_ok = false;
    } else if (it->second->kind == ComponentDef::Kind::kSpout) {
      errors.push_back(
          absl::StrCat(at, "stream to '", s.to.value(), "': a spout cannot consume a stream"));
      endpoints_ok = false;
    } else {
      consumers.insert(s.to.value());
    }
    if (s.grouping.type == GroupingType::kCustom) {
      const std::string& cls = s.grouping.custom.class_name;
      if (cls.empty()) {
        errors.push_back(absl::StrCat(at, "CUSTOM grouping needs customClass"));
      } else if (!registry_.HasGrouping(cls)) {
        errors.push_back(absl::StrCat(at, "unknown grouping class '", cls, "'"));
      }
    }
    if (!endpoints_ok || !instantiated.contains(s.from.value())) continue;

    const auto& declared = report.streams[s.from];
    auto decl = declared.find(s.stream);
    if (decl == declared.end()) {
      errors.push_back(absl::StrCat(at, "component '", s.from.value(),
                                    "' does not declare stream '", s.stream.value(),
                                    "' (declared: ", StreamNames(declared), ")"));
      continue;
    }
    const api::Fields& fields = decl->second.fields;
    for (const std::string& f : s.grouping.fields) {
      if (!fields.Contains(f)) {
        errors.push_back(absl::StrCat(at, Sv(GroupingTypeName(s.grouping.type)),
                                      " grouping field '", f, "' is not in stream '",
                                      s.stream.value(), "' of '", s.from.value(), "' ",
                                      fields.DebugString()));
      }
    }
    const bool direct_grouping = s.grouping.type == GroupingType::kDirect;
    if (direct_grouping && !decl->second.direct) {
      errors.push_back(absl::StrCat(at, "DIRECT grouping on stream '", s.stream.value(), "' of '",
                                    s.from.value(), "', which is not declared direct"));
    } else if (!direct_grouping && decl->second.direct) {
      errors.push_back(absl::StrCat(at, "stream '", s.stream.value(), "' of '", s.from.value(),
                                    "' is direct; its consumers must use DIRECT grouping, not ",
                                    Sv(GroupingTypeName(s.grouping.type))));
    }
  }
  CheckInputRequirements(def, declarers, report.streams, errors);
  for (const ComponentDef& b : def.bolts) {
    if (!b.id.value().empty() && !consumers.contains(b.id.value())) {
      report.warnings.push_back(
          absl::StrCat(b.location.Prefix(), "bolt '", b.id.value(), "' consumes no stream"));
    }
  }
  return report;
}

absl::StatusOr<ComponentStreams> TopologyValidator::Validate(const TopologyDef& def) const {
  ValidationReport report = Check(def);
  if (!report.ok()) return report.ToStatus();
  return std::move(report.streams);
}

}  // namespace tempest::core
