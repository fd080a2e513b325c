#include "common/api/component_registry.h"

#include <algorithm>
#include <exception>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/api/status_macros.h"
#include "common/api/string_view_compat.h"

namespace tempest::api {
namespace {

std::string_view KindName(ComponentRegistry::Kind kind) {
  switch (kind) {
    case ComponentRegistry::Kind::kSpout:
      return "spout";
    case ComponentRegistry::Kind::kBolt:
      return "bolt";
    case ComponentRegistry::Kind::kGrouping:
      return "grouping";
  }
  return "?";
}

// Factories run user constructors, which may throw: this is a boundary.
template <typename T, typename F>
absl::StatusOr<std::unique_ptr<T>> CallFactory(const F& factory, const ComponentArgs& args) {
  try {
    return factory(args);
  } catch (const std::exception& e) {
    return absl::InternalError(
        absl::StrCat("constructing ", args.class_name, " threw: ", e.what()));
  } catch (...) {
    return absl::InternalError(absl::StrCat("constructing ", args.class_name, " threw"));
  }
}

}  // namespace

std::optional<std::string> ClosestName(std::string_view name,
                                       std::span<const std::string_view> candidates) {
  // Optimal string alignment distance (Levenshtein plus adjacent swaps,
  // the commonest typo), case-insensitive.
  auto lower = [](char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; };
  auto distance = [&](std::string_view a, std::string_view b) {
    std::vector<std::vector<size_t>> d(a.size() + 1, std::vector<size_t>(b.size() + 1));
    for (size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
    for (size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
    for (size_t i = 1; i <= a.size(); ++i) {
      for (size_t j = 1; j <= b.size(); ++j) {
        const size_t cost = lower(a[i - 1]) == lower(b[j - 1]) ? 0 : 1;
        d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
        if (i > 1 && j > 1 && lower(a[i - 1]) == lower(b[j - 2]) &&
            lower(a[i - 2]) == lower(b[j - 1])) {
          d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
        }
      }
    }
    return d[a.size()][b.size()];
  };
  std::optional<std::string> best;
  size_t best_distance = 0;
  for (std::string_view candidate : candidates) {
    const size_t dist = distance(name, candidate);
    if (!best || dist < best_distance) {
      best = std::string(candidate);
      best_distance = dist;
    }
  }
  // Up to a third of the name may be wrong (at least 2 edits for short names).
  const size_t allowed = std::max<size_t>(2, name.size() / 3);
  if (!best || best_distance > allowed) return std::nullopt;
  return best;
}

absl::Status CheckKnownProperties(const ComponentArgs& args,
                                  std::span<const std::string_view> known) {
  std::vector<std::string> problems;
  for (const auto& [name, value] : args.properties) {
    if (std::find(known.begin(), known.end(), name) != known.end()) continue;
    std::optional<std::string> suggestion = ClosestName(name, known);
    problems.push_back(absl::StrCat("unknown property '", name, "'",
                                    suggestion ? absl::StrCat(" (did you mean '", *suggestion, "'?)")
                                               : std::string()));
  }
  if (problems.empty()) return absl::OkStatus();
  std::vector<std::string> names(known.begin(), known.end());
  return absl::InvalidArgumentError(absl::StrCat(
      args.class_name, ": ", absl::StrJoin(problems, ", "), "; its properties are: ",
      names.empty() ? std::string("none") : absl::StrJoin(names, ", ")));
}

const Value* ComponentArgs::Property(std::string_view name) const {
  auto it = properties.find(std::string(name));
  return it == properties.end() ? nullptr : &it->second;
}

namespace {
template <typename T, typename Fn>
absl::StatusOr<T> TypedProperty(const ComponentArgs& args, std::string_view name, T def, Fn fn) {
  const Value* v = args.Property(name);
  if (v == nullptr || v->is_nil()) return def;
  absl::StatusOr<T> r = fn(*v);
  if (!r.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat(args.class_name, " property '", Sv(name), "': ", r.status().message()));
  }
  return r;
}
}  // namespace

absl::StatusOr<int64_t> ComponentArgs::IntProperty(std::string_view name,
                                                   int64_t default_value) const {
  return TypedProperty<int64_t>(*this, name, default_value,
                                [](const Value& v) { return v.CoerceInt(); });
}
absl::StatusOr<double> ComponentArgs::DoubleProperty(std::string_view name,
                                                     double default_value) const {
  return TypedProperty<double>(*this, name, default_value,
                               [](const Value& v) { return v.CoerceDouble(); });
}
absl::StatusOr<bool> ComponentArgs::BoolProperty(std::string_view name, bool default_value) const {
  return TypedProperty<bool>(*this, name, default_value,
                             [](const Value& v) { return v.CoerceBool(); });
}
absl::StatusOr<ComponentArgs> ComponentArgs::WithPositionalArgs(
    std::initializer_list<std::string_view> names) const {
  const std::vector<std::string_view> order(names.begin(), names.end());
  if (constructor_args.size() > order.size()) {
    std::string expected = order.empty() ? "none" : "";
    for (size_t i = 0; i < order.size(); ++i) absl::StrAppend(&expected, i ? ", " : "", Sv(order[i]));
    return absl::InvalidArgumentError(absl::StrCat(class_name, " takes at most ", order.size(),
                                                   " constructorArgs (", expected, "), got ",
                                                   constructor_args.size()));
  }
  ComponentArgs out = *this;
  out.constructor_args.clear();
  for (size_t i = 0; i < constructor_args.size(); ++i) {
    const std::string name(order[i]);
    if (out.properties.contains(name)) {
      return absl::InvalidArgumentError(absl::StrCat(
          class_name, ": '", name, "' given both as constructorArgs[", i, "] and as a property"));
    }
    out.properties[name] = constructor_args[i];
  }
  return out;
}

absl::StatusOr<std::string> ComponentArgs::StringProperty(std::string_view name,
                                                          std::string_view default_value) const {
  return TypedProperty<std::string>(*this, name, std::string(default_value),
                                    [](const Value& v) { return v.CoerceString(); });
}

ComponentRegistry& ComponentRegistry::Global() {
  static ComponentRegistry* const kRegistry = new ComponentRegistry();
  return *kRegistry;
}

absl::Status ComponentRegistry::Add(std::string_view class_name, Entry entry) {
  absl::MutexLock lock(&mu_);
  auto [it, inserted] = entries_.try_emplace(std::string(class_name), std::move(entry));
  if (!inserted) {
    return absl::AlreadyExistsError(absl::StrCat(
        "class '", Sv(class_name), "' is already registered as a ", Sv(KindName(it->second.kind))));
  }
  return absl::OkStatus();
}

absl::Status ComponentRegistry::RegisterSpout(std::string_view class_name, SpoutFactory factory) {
  return Add(class_name, Entry{Kind::kSpout, std::move(factory), nullptr, nullptr});
}
absl::Status ComponentRegistry::RegisterBolt(std::string_view class_name, BoltFactory factory) {
  return Add(class_name, Entry{Kind::kBolt, nullptr, std::move(factory), nullptr});
}
absl::Status ComponentRegistry::RegisterGrouping(std::string_view class_name,
                                                 GroupingFactory factory) {
  return Add(class_name, Entry{Kind::kGrouping, nullptr, nullptr, std::move(factory)});
}

std::optional<ComponentRegistry::Kind> ComponentRegistry::KindOf(
    std::string_view class_name) const {
  absl::MutexLock lock(&mu_);
  auto it = entries_.find(class_name);
  if (it == entries_.end()) return std::nullopt;
  return it->second.kind;
}

std::vector<std::string> ComponentRegistry::ClassNames(Kind kind) const {
  absl::MutexLock lock(&mu_);
  std::vector<std::string> out;
  for (const auto& [name, e] : entries_) {
    if (e.kind == kind) out.push_back(name);
  }
  return out;
}

absl::StatusOr<ComponentRegistry::Entry> ComponentRegistry::Lookup(std::string_view class_name,
                                                                   Kind kind) const {
  absl::MutexLock lock(&mu_);
  auto it = entries_.find(class_name);
  if (it == entries_.end()) {
    return absl::NotFoundError(
        absl::StrCat("unknown ", Sv(KindName(kind)), " class '", Sv(class_name), "'"));
  }
  if (it->second.kind != kind) {
    return absl::InvalidArgumentError(absl::StrCat("class '", Sv(class_name), "' is a ",
                                                   Sv(KindName(it->second.kind)), ", not a ",
                                                   Sv(KindName(kind))));
  }
  return it->second;
}

absl::StatusOr<std::unique_ptr<Spout>> ComponentRegistry::CreateSpout(
    const ComponentArgs& args) const {
  TEMPEST_ASSIGN_OR_RETURN(const Entry e, Lookup(args.class_name, Kind::kSpout));
  return CallFactory<Spout>(e.spout, args);
}

absl::StatusOr<std::unique_ptr<Bolt>> ComponentRegistry::CreateBolt(
    const ComponentArgs& args) const {
  TEMPEST_ASSIGN_OR_RETURN(const Entry e, Lookup(args.class_name, Kind::kBolt));
  return CallFactory<Bolt>(e.bolt, args);
}

absl::StatusOr<std::unique_ptr<CustomStreamGrouping>> ComponentRegistry::CreateGrouping(
    const ComponentArgs& args) const {
  TEMPEST_ASSIGN_OR_RETURN(const Entry e, Lookup(args.class_name, Kind::kGrouping));
  return CallFactory<CustomStreamGrouping>(e.grouping, args);
}

absl::Status ComponentRegistry::MergeFrom(const ComponentRegistry& other,
                                          std::vector<std::string>* added) {
  if (&other == this) return absl::OkStatus();
  std::map<std::string, Entry, std::less<>> copy;
  {
    absl::MutexLock lock(&other.mu_);
    copy = other.entries_;
  }
  std::vector<std::string> taken;
  absl::MutexLock lock(&mu_);
  for (auto& [name, entry] : copy) {
    if (entries_.contains(name)) {
      taken.push_back(name);
      continue;
    }
    entries_.emplace(name, std::move(entry));
    if (added != nullptr) added->push_back(name);
  }
  if (!taken.empty()) {
    std::string names;
    for (const std::string& n : taken) absl::StrAppend(&names, names.empty() ? "" : ", ", n);
    return absl::AlreadyExistsError(absl::StrCat("classes already registered: ", names));
  }
  return absl::OkStatus();
}

void ComponentRegistry::RecordRegistrationError(const absl::Status& status) {
  absl::MutexLock lock(&mu_);
  registration_errors_.emplace_back(status.message());
}

std::vector<std::string> ComponentRegistry::registration_errors() const {
  absl::MutexLock lock(&mu_);
  return registration_errors_;
}

}  // namespace tempest::api
