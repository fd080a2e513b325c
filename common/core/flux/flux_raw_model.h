#ifndef TEMPEST_COMMON_CORE_FLUX_RAW_MODEL_H_
#define TEMPEST_COMMON_CORE_FLUX_RAW_MODEL_H_

// The Flux loader's intermediate form: one parsed file with references still
// unresolved, and the diagnostics every loading step appends to. Internal to
// FluxLoader (flux_*.cc); value types.

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/api/config.h"
#include "common/api/string_view_compat.h"
#include "common/api/value.h"
#include "common/core/topology/topology_def.h"

namespace tempest::core::flux_internal {

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
    errors_.push_back(absl::StrCat(loc.Prefix(), api::Sv(msg)));
  }
  // An error already formatted "file:line: message".
  void Raw(std::string error) { errors_.push_back(std::move(error)); }
  void Warning(const SourceLocation& loc, std::string_view msg) {
    warnings_.push_back(absl::StrCat(loc.Prefix(), api::Sv(msg)));
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

}  // namespace tempest::core::flux_internal

#endif  // TEMPEST_COMMON_CORE_FLUX_RAW_MODEL_H_
