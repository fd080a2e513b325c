#include "spout/spout_args.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace tempest::spout {

absl::StatusOr<api::ComponentArgs> WithPositionalArgs(
    const api::ComponentArgs& args, std::initializer_list<std::string_view> names) {
  std::vector<std::string> order(names.begin(), names.end());
  if (args.constructor_args.size() > order.size()) {
    return absl::InvalidArgumentError(absl::StrCat(args.class_name, " takes at most ", order.size(),
                                                   " constructorArgs (", absl::StrJoin(order, ", "),
                                                   "), got ", args.constructor_args.size()));
  }
  api::ComponentArgs out = args;
  out.constructor_args.clear();
  for (size_t i = 0; i < args.constructor_args.size(); ++i) {
    const std::string& name = order[i];
    if (out.properties.contains(name)) {
      return absl::InvalidArgumentError(absl::StrCat(args.class_name, ": '", name,
                                                     "' given both as constructorArgs[", i,
                                                     "] and as a property"));
    }
    out.properties[name] = args.constructor_args[i];
  }
  return out;
}

}  // namespace tempest::spout
