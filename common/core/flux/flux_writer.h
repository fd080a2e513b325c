#ifndef TEMPEST_COMMON_CORE_FLUX_WRITER_H_
#define TEMPEST_COMMON_CORE_FLUX_WRITER_H_

// The Flux raw model back to Flux YAML: how `tempest submit` turns a file
// and its includes into one self-contained text, so nimbus never has to
// read a file. Internal to FluxLoader; pure; any thread.

#include <string>
#include <string_view>

#include "common/core/flux/flux_raw_model.h"

namespace tempest::core::flux_internal {

// One Flux document that parses back to the same raw model as `file`
// (name, config, components, spouts, bolts, streams; `includes` are left
// out: `file` is expected to have them merged in already). `header` is
// written first as comment lines. Every string is double-quoted, so no
// value changes type on the way back; references and property shapes keep
// their Flux spelling.
std::string WriteFluxFile(const RawFile& file, std::string_view header);

}  // namespace tempest::core::flux_internal

#endif  // TEMPEST_COMMON_CORE_FLUX_WRITER_H_
