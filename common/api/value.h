#ifndef TEMPEST_COMMON_API_VALUE_H_
#define TEMPEST_COMMON_API_VALUE_H_

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "absl/status/statusor.h"

namespace tempest::api {

class Value;
// A tuple's values, in the order of its stream's Fields.
using Values = std::vector<Value>;
using ValueList = std::vector<Value>;
using ValueMap = std::map<std::string, Value>;

// Raw bytes, kept apart from text so serializers and Java-compatible hashing
// can tell them from strings.
struct Bytes {
  std::string data;
  friend bool operator==(const Bytes&, const Bytes&) = default;
};

namespace value_internal {
// Heap box with value semantics (deep copy), so lists and maps cost one
// pointer inside Value and Value stays 40 bytes.
template <typename T>
class Box {
 public:
  explicit Box(T v) : p_(std::make_unique<T>(std::move(v))) {}
  Box(const Box& o) : p_(std::make_unique<T>(*o.p_)) {}
  Box(Box&&) noexcept = default;
  Box& operator=(const Box& o) {
    if (this != &o) p_ = std::make_unique<T>(*o.p_);
    return *this;
  }
  Box& operator=(Box&&) noexcept = default;
  const T& get() const { return *p_; }
  T& get() { return *p_; }
  friend bool operator==(const Box& a, const Box& b) { return *a.p_ == *b.p_; }

 private:
  std::unique_ptr<T> p_;
};
}  // namespace value_internal

// A dynamically typed tuple value: nil, bool, int64, double, string (UTF-8),
// bytes, list or map (string keys). Owns its contents; moving is cheap (a
// string payload moves its heap buffer, lists and maps move one pointer).
// Not synchronized: share across threads only as const.
//
//   Value v("hello");  v.is_string();  v.AsString() == "hello"
//   Value n(int64_t{42});  n.AsInt() == 42;  n.CoerceDouble() -> 42.0
//
// The As*() accessors require the matching type (a mismatch is a programming
// error and aborts); Try*() return nullptr/nullopt instead; Coerce*() convert
// leniently (e.g. "42" -> 42) and report failure as a Status.
class Value {
 public:
  enum class Type : uint8_t { kNil, kBool, kInt, kDouble, kString, kBytes, kList, kMap };

  Value() = default;
  Value(std::nullptr_t) {}  // NOLINT(google-explicit-constructor)
  Value(bool b) : v_(b) {}  // NOLINT(google-explicit-constructor)
  template <std::integral I>
  requires(!std::same_as<I, bool> && !std::same_as<I, char>) Value(I i)
      : v_(static_cast<int64_t>(i)) {}               // NOLINT(google-explicit-constructor)
  Value(double d) : v_(d) {}                         // NOLINT(google-explicit-constructor)
  Value(const char* s) : v_(std::string(s)) {}       // NOLINT(google-explicit-constructor)
  Value(std::string s) : v_(std::move(s)) {}         // NOLINT(google-explicit-constructor)
  Value(std::string_view s) : v_(std::string(s)) {}  // NOLINT(google-explicit-constructor)
  Value(Bytes b) : v_(std::move(b)) {}               // NOLINT(google-explicit-constructor)
  Value(ValueList l) : v_(ListBox(std::move(l))) {}  // NOLINT(google-explicit-constructor)
  Value(ValueMap m) : v_(MapBox(std::move(m))) {}    // NOLINT(google-explicit-constructor)

  static Value OfBytes(std::string data) { return Value(Bytes{std::move(data)}); }

  Type type() const { return static_cast<Type>(v_.index()); }
  static std::string_view TypeName(Type t);

  bool is_nil() const { return type() == Type::kNil; }
  bool is_bool() const { return type() == Type::kBool; }
  bool is_int() const { return type() == Type::kInt; }
  bool is_double() const { return type() == Type::kDouble; }
  bool is_string() const { return type() == Type::kString; }
  bool is_bytes() const { return type() == Type::kBytes; }
  bool is_list() const { return type() == Type::kList; }
  bool is_map() const { return type() == Type::kMap; }

  // Strict accessors: the type must match (aborts otherwise).
  bool AsBool() const { return Get<bool>(); }
  int64_t AsInt() const { return Get<int64_t>(); }
  double AsDouble() const { return Get<double>(); }
  const std::string& AsString() const { return Get<std::string>(); }
  const std::string& AsBytes() const { return Get<Bytes>().data; }
  const ValueList& AsList() const { return Get<ListBox>().get(); }
  const ValueMap& AsMap() const { return Get<MapBox>().get(); }
  ValueList& MutableList() { return GetMutable<ListBox>().get(); }
  ValueMap& MutableMap() { return GetMutable<MapBox>().get(); }

  // Checked accessors: nullptr / nullopt when the type differs.
  std::optional<bool> TryBool() const;
  std::optional<int64_t> TryInt() const;
  std::optional<double> TryDouble() const;
  const std::string* TryString() const { return std::get_if<std::string>(&v_); }
  const std::string* TryBytes() const;
  const ValueList* TryList() const;
  const ValueMap* TryMap() const;
  // Map member lookup; nullptr when not a map or the key is absent.
  const Value* Find(std::string_view key) const;

  // Lenient conversions for configuration and component arguments.
  // int: int, integral double, decimal string. double: any number or numeric
  // string. bool: bool or "true"/"false" (any case). string: string, bytes,
  // numbers and bools in their YAML spelling; nil, lists and maps fail.
  absl::StatusOr<int64_t> CoerceInt() const;
  absl::StatusOr<double> CoerceDouble() const;
  absl::StatusOr<bool> CoerceBool() const;
  absl::StatusOr<std::string> CoerceString() const;

  // A compact JSON-like rendering for logs and error messages.
  std::string DebugString() const;

  friend bool operator==(const Value&, const Value&) = default;

  template <typename H>
  friend H AbslHashValue(H h, const Value& v) {
    h = H::combine(std::move(h), v.v_.index());
    switch (v.type()) {
      case Type::kNil:
        return h;
      case Type::kBool:
        return H::combine(std::move(h), v.AsBool());
      case Type::kInt:
        return H::combine(std::move(h), v.AsInt());
      case Type::kDouble:
        return H::combine(std::move(h), v.AsDouble());
      case Type::kString:
        return H::combine(std::move(h), v.AsString());
      case Type::kBytes:
        return H::combine(std::move(h), v.AsBytes());
      case Type::kList:
        return H::combine(std::move(h), v.AsList());
      case Type::kMap:
        return H::combine(std::move(h), v.AsMap());
    }
    return h;
  }

  friend std::ostream& operator<<(std::ostream& os, const Value& v) {
    return os << v.DebugString();
  }

 private:
  using ListBox = value_internal::Box<ValueList>;
  using MapBox = value_internal::Box<ValueMap>;

  template <typename T>
  const T& Get() const {
    const T* p = std::get_if<T>(&v_);
    if (p == nullptr) TypeMismatch(static_cast<Type>(VariantIndex<T>()));
    return *p;
  }
  template <typename T>
  T& GetMutable() {
    T* p = std::get_if<T>(&v_);
    if (p == nullptr) TypeMismatch(static_cast<Type>(VariantIndex<T>()));
    return *p;
  }
  template <typename T>
  static constexpr size_t VariantIndex() {
    if constexpr (std::is_same_v<T, bool>) return 1;
    if constexpr (std::is_same_v<T, int64_t>) return 2;
    if constexpr (std::is_same_v<T, double>) return 3;
    if constexpr (std::is_same_v<T, std::string>) return 4;
    if constexpr (std::is_same_v<T, Bytes>) return 5;
    if constexpr (std::is_same_v<T, ListBox>) return 6;
    if constexpr (std::is_same_v<T, MapBox>) return 7;
    return 0;
  }
  [[noreturn]] void TypeMismatch(Type wanted) const;

  std::variant<std::monostate, bool, int64_t, double, std::string, Bytes, ListBox, MapBox> v_;
};

}  // namespace tempest::api

#endif  // TEMPEST_COMMON_API_VALUE_H_
