#ifndef TEMPEST_SPOUT_SPOUT_ARGS_H_
#define TEMPEST_SPOUT_SPOUT_ARGS_H_

#include <initializer_list>
#include <string_view>

#include "absl/status/statusor.h"
#include "common/api/component_registry.h"

namespace tempest::spout {

// Folds Flux `constructorArgs` into named properties, so a built-in spout can
// be written either way: the i-th constructor arg becomes property names[i].
// InvalidArgument (naming the class) for more args than names, or for a
// setting given both positionally and as a property. Pure function.
absl::StatusOr<api::ComponentArgs> WithPositionalArgs(
    const api::ComponentArgs& args, std::initializer_list<std::string_view> names);

}  // namespace tempest::spout

#endif  // TEMPEST_SPOUT_SPOUT_ARGS_H_
