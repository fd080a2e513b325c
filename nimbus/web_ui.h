#ifndef TEMPEST_NIMBUS_WEB_UI_H_
#define TEMPEST_NIMBUS_WEB_UI_H_

#include <string_view>

namespace tempest::nimbus {

// ui/index.html, compiled in (nimbus/CMakeLists.txt), so a nimbus serves its
// web UI at / with no files to install.
std::string_view WebUiIndexHtml();

}  // namespace tempest::nimbus

#endif  // TEMPEST_NIMBUS_WEB_UI_H_
