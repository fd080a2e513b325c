#include "common/api/tuple.h"

#include <cstdio>
#include <cstdlib>

#include "absl/strings/str_cat.h"

namespace tempest::api {

const StreamId& DefaultStreamId() {
  static const StreamId* const kId = new StreamId(std::string(kDefaultStreamName));
  return *kId;
}

Tuple Tuple::MakeTick(int64_t freq_secs) {
  static const auto* const kSchema =
      new std::shared_ptr<const StreamSchema>(std::make_shared<const StreamSchema>(
          StreamSchema{ComponentId(std::string(kSystemComponentName)),
                       StreamId(std::string(kTickStreamName)), Fields({"rate_secs"})}));
  Values v;
  v.emplace_back(freq_secs);
  return Tuple(*kSchema, TaskId(kSystemTaskId), std::move(v));
}

const Value* Tuple::Find(std::string_view field) const {
  std::optional<int> i = fields().IndexOf(field);
  if (!i || *i >= size()) return nullptr;
  return &body_->values[*i];
}

const Value& Tuple::GetByField(std::string_view field) const {
  const Value* v = Find(field);
  if (v == nullptr) {
    std::fprintf(stderr, "tempest::api::Tuple: no field '%.*s' in %s from %s\n",
                 static_cast<int>(field.size()), field.data(), fields().DebugString().c_str(),
                 source_component().value().c_str());
    std::abort();
  }
  return *v;
}

bool Tuple::IsTickSchema() const {
  return source_component().value() == kSystemComponentName &&
         source_stream().value() == kTickStreamName;
}

std::string Tuple::DebugString() const {
  if (!valid()) return "<empty tuple>";
  return absl::StrCat(source_component().value(), ":", source_stream().value(), "@",
                      source_task().value(), " ", Value(ValueList(values())).DebugString());
}

}  // namespace tempest::api
