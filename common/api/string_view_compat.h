#ifndef TEMPEST_COMMON_API_STRING_VIEW_COMPAT_H_
#define TEMPEST_COMMON_API_STRING_VIEW_COMPAT_H_

#include <string_view>

#include "absl/strings/string_view.h"

namespace tempest::api {

// Debian's Abseil is built with its own absl::string_view (not an alias of
// std::string_view). Tempest's interfaces use std::string_view; wrap one with
// Sv() before handing it to absl::StrCat and friends.
inline absl::string_view Sv(std::string_view s) { return absl::string_view(s.data(), s.size()); }
// And back: an Abseil view (e.g. Status::message()) as a std::string_view.
inline std::string_view StdSv(absl::string_view s) { return std::string_view(s.data(), s.size()); }

}  // namespace tempest::api

#endif  // TEMPEST_COMMON_API_STRING_VIEW_COMPAT_H_
