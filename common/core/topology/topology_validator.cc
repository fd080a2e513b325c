#include "common/core/topology/topology_validator.h"

#include <map>
#include <optional>
#include <set>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/api/string_view_compat.h"
#include "common/core/config/config_keys.h"
#include "common/core/status_macros.h"
#include "common/core/topology/topology_limits.h"

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
    TEMPEST_ASSIGN_OR_RETURN(std::unique_ptr<api::Spout> spout, registry.CreateSpout(c.args));
    spout->DeclareOutputFields(declarer);
  } else {
    TEMPEST_ASSIGN_OR_RETURN(std::unique_ptr<api::Bolt> bolt, registry.CreateBolt(c.args));
    bolt->DeclareOutputFields(declarer);
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

void CheckConfig(const TopologyDef& def, ValidationReport& report) {
  std::vector<std::string>& errors = report.errors;
  const std::string where = def.location.Prefix();
  // Integer keys against their ranges (config_keys.cc): 2^31 must not wrap
  // around where a value is read as an int.
  for (const auto& [key, value] : def.config.entries()) {
    absl::Status s = CheckConfigValue(key, value);
    if (s.ok()) continue;
    if (value.is_string() && absl::StrContains(value.AsString(), "${")) {
      errors.push_back(absl::StrCat(where, "config ", Sv(key), " is ", value.DebugString(),
                                    ", a placeholder never substituted (pass --env-filter for "
                                    "${ENV-NAME}, --filter PROPS for ${name})"));
      report.unsubstituted.push_back(errors.back());
      continue;
    }
    errors.push_back(absl::StrCat(where, s.message()));
  }
  for (std::string_view key : {api::kTopologyDebug, api::kTopologyEnableMessageTimeouts}) {
    const api::Value* v = def.config.Find(key);
    if (v != nullptr && !v->is_nil() && !v->CoerceBool().ok()) {
      errors.push_back(
          absl::StrCat(where, "config ", Sv(key), " must be a boolean, got ", v->DebugString()));
    }
  }
}

// One Check(): the steps in report order, sharing what earlier steps learnt
// (components by id, which ones could be instantiated, their declarers).
class ValidationRun {
 public:
  ValidationRun(const api::ComponentRegistry& registry, const TopologyDef& def)
      : registry_(registry), def_(def), errors_(report_.errors) {}

  ValidationReport Run() && {
    const std::string top = def_.location.Prefix();
    // Sizes and names first: past a limit nothing more is checked, so no
    // instance or per-task structure is made for an oversized topology.
    errors_ = CheckTopologyLimits(def_);
    if (!errors_.empty()) return std::move(report_);
    if (def_.name.empty()) errors_.push_back(absl::StrCat(top, "topology has no name"));
    if (def_.spouts.empty()) errors_.push_back(absl::StrCat(top, "topology has no spouts"));
    CheckConfig(def_, report_);
    for (const ComponentDef* c : def_.AllComponents()) CheckComponent(*c);
    ResolvePassThrough(def_, declarers_, report_.streams, errors_);
    for (const StreamDef& s : def_.streams) CheckStream(s);
    CheckInputRequirements(def_, declarers_, report_.streams, errors_);
    WarnAboutUnconsumedBolts();
    return std::move(report_);
  }

 private:
  // Id, parallelism, numTasks and className of `c`, then its class; a
  // component whose class is fine is instantiated for its streams.
  void CheckComponent(const ComponentDef& c) {
    const std::string at = c.location.Prefix();
    const std::string kind(c.KindName());
    const std::string& id = c.id.value();
    if (!RegisterId(c, at, kind)) return;
    if (c.parallelism < 1) {
      errors_.push_back(
          absl::StrCat(at, kind, " '", id, "': parallelism must be >= 1, got ", c.parallelism));
    }
    if (c.num_tasks == 0 || c.num_tasks < -1) {
      errors_.push_back(
          absl::StrCat(at, kind, " '", id, "': numTasks must be >= 1, got ", c.num_tasks));
    }
    if (c.args.class_name.empty()) {
      errors_.push_back(absl::StrCat(at, kind, " '", id, "' has no className"));
      return;
    }
    if (!CheckClassKind(c, at, kind)) return;
    Instantiate(c, at, kind);
  }

  // Records `c` under its id; false for a duplicate id (nothing more is
  // checked for it). Empty and reserved ids are errors but not duplicates.
  bool RegisterId(const ComponentDef& c, const std::string& at, const std::string& kind) {
    const std::string& id = c.id.value();
    if (id.empty()) {
      errors_.push_back(absl::StrCat(at, kind, " has no id"));
    } else if (id.starts_with("__")) {
      errors_.push_back(absl::StrCat(
          at, kind, " id '", id, "' is reserved (ids starting with '__' are system components)"));
    } else {
      auto [it, inserted] = by_id_.emplace(id, &c);
      if (!inserted) {
        errors_.push_back(absl::StrCat(at, "duplicate id '", id, "' (first declared at ",
                                       it->second->location.file, ":", it->second->location.line,
                                       ")"));
        return false;
      }
    }
    return true;
  }

  // Whether the registry knows c's class as the kind `c` is (spout / bolt).
  bool CheckClassKind(const ComponentDef& c, const std::string& at, const std::string& kind) {
    const std::string& id = c.id.value();
    std::optional<api::ComponentRegistry::Kind> registered = registry_.KindOf(c.args.class_name);
    const auto wanted = c.kind == ComponentDef::Kind::kSpout ? api::ComponentRegistry::Kind::kSpout
                                                             : api::ComponentRegistry::Kind::kBolt;
    if (!registered) {
      errors_.push_back(
          absl::StrCat(at, "unknown ", kind, " class '", c.args.class_name, "' for '", id, "'"));
      return false;
    }
    if (*registered != wanted) {
      errors_.push_back(
          absl::StrCat(at, "class '", c.args.class_name, "' of '", id, "' is not a ", kind));
      return false;
    }
    return true;
  }

  // Constructs `c` and records the streams it declares.
  void Instantiate(const ComponentDef& c, const std::string& at, const std::string& kind) {
    const std::string& id = c.id.value();
    absl::StatusOr<api::OutputFieldsDeclarer> declared = Declare(registry_, c);
    if (!declared.ok()) {
      errors_.push_back(absl::StrCat(at, kind, " '", id, "' (", c.args.class_name,
                                     "): ", declared.status().message()));
      return;
    }
    for (const api::StreamId& dup : declared->duplicates()) {
      errors_.push_back(
          absl::StrCat(at, kind, " '", id, "' declares stream '", dup.value(), "' twice"));
    }
    for (const auto& [stream, decl] : declared->streams()) {
      if (decl.fields.HasDuplicates()) {
        errors_.push_back(absl::StrCat(at, kind, " '", id, "' stream '", stream.value(),
                                       "' has duplicate field names ", decl.fields.DebugString()));
      }
    }
    report_.streams[c.id] = declared->streams();
    instantiated_.insert(id);
    declarers_.emplace(id, *std::move(declared));
  }

  void CheckStream(const StreamDef& s) {
    const bool endpoints_ok = CheckEndpoints(s);
    CheckCustomGroupingClass(s);
    if (!endpoints_ok || !instantiated_.contains(s.from.value())) return;
    CheckAgainstDeclaration(s);
  }

  // `from` and `to` name known components, `to` a bolt (which then counts as
  // consuming a stream).
  bool CheckEndpoints(const StreamDef& s) {
    const std::string at = s.location.Prefix();
    bool endpoints_ok = true;
    if (s.from.value().empty()) {
      errors_.push_back(absl::StrCat(at, "stream is missing 'from'"));
      endpoints_ok = false;
    } else if (!by_id_.contains(s.from.value())) {
      errors_.push_back(absl::StrCat(at, "stream from unknown component '", s.from.value(), "'"));
      endpoints_ok = false;
    }
    if (s.to.value().empty()) {
      errors_.push_back(absl::StrCat(at, "stream is missing 'to'"));
      endpoints_ok = false;
    } else if (auto it = by_id_.find(s.to.value()); it == by_id_.end()) {
      errors_.push_back(absl::StrCat(at, "stream to unknown component '", s.to.value(), "'"));
      endpoints_ok = false;
    } else if (it->second->kind == ComponentDef::Kind::kSpout) {
      errors_.push_back(
          absl::StrCat(at, "stream to '", s.to.value(), "': a spout cannot consume a stream"));
      endpoints_ok = false;
    } else {
      consumers_.insert(s.to.value());
    }
    return endpoints_ok;
  }

  void CheckCustomGroupingClass(const StreamDef& s) {
    if (s.grouping.type != GroupingType::kCustom) return;
    const std::string at = s.location.Prefix();
    const std::string& cls = s.grouping.custom.class_name;
    if (cls.empty()) {
      errors_.push_back(absl::StrCat(at, "CUSTOM grouping needs customClass"));
    } else if (!registry_.HasGrouping(cls)) {
      errors_.push_back(absl::StrCat(at, "unknown grouping class '", cls, "'"));
    }
  }

  // The stream is declared by its source, carries the grouping's fields,
  // and is direct exactly when the grouping is DIRECT.
  void CheckAgainstDeclaration(const StreamDef& s) {
    const std::string at = s.location.Prefix();
    const auto& declared = report_.streams[s.from];
    auto decl = declared.find(s.stream);
    if (decl == declared.end()) {
      errors_.push_back(absl::StrCat(at, "component '", s.from.value(),
                                     "' does not declare stream '", s.stream.value(),
                                     "' (declared: ", StreamNames(declared), ")"));
      return;
    }
    const api::Fields& fields = decl->second.fields;
    for (const std::string& f : s.grouping.fields) {
      if (!fields.Contains(f)) {
        errors_.push_back(absl::StrCat(at, Sv(GroupingTypeName(s.grouping.type)),
                                       " grouping field '", f, "' is not in stream '",
                                       s.stream.value(), "' of '", s.from.value(), "' ",
                                       fields.DebugString()));
      }
    }
    const bool direct_grouping = s.grouping.type == GroupingType::kDirect;
    if (direct_grouping && !decl->second.direct) {
      errors_.push_back(absl::StrCat(at, "DIRECT grouping on stream '", s.stream.value(),
                                     "' of '", s.from.value(), "', which is not declared direct"));
    } else if (!direct_grouping && decl->second.direct) {
      errors_.push_back(absl::StrCat(at, "stream '", s.stream.value(), "' of '", s.from.value(),
                                     "' is direct; its consumers must use DIRECT grouping, not ",
                                     Sv(GroupingTypeName(s.grouping.type))));
    }
  }

  void WarnAboutUnconsumedBolts() {
    for (const ComponentDef& b : def_.bolts) {
      if (!b.id.value().empty() && !consumers_.contains(b.id.value())) {
        report_.warnings.push_back(
            absl::StrCat(b.location.Prefix(), "bolt '", b.id.value(), "' consumes no stream"));
      }
    }
  }

  const api::ComponentRegistry& registry_;
  const TopologyDef& def_;
  ValidationReport report_;
  std::vector<std::string>& errors_;  // report_.errors
  std::map<std::string, const ComponentDef*> by_id_;
  std::set<std::string> instantiated_;
  std::set<std::string> consumers_;
  Declarers declarers_;
};

}  // namespace

absl::Status ValidationReport::ToStatus() const {
  if (errors.empty()) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrJoin(errors, "\n"));
}

ValidationReport TopologyValidator::Check(const TopologyDef& def) const {
  return ValidationRun(registry_, def).Run();
}

absl::StatusOr<ComponentStreams> TopologyValidator::Validate(const TopologyDef& def) const {
  ValidationReport report = Check(def);
  if (!report.ok()) return report.ToStatus();
  return std::move(report.streams);
}

}  // namespace tempest::core
