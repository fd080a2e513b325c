#ifndef TEMPEST_NIMBUS_WEB_UI_H_
#define TEMPEST_NIMBUS_WEB_UI_H_

#include <string>
#include <string_view>

namespace tempest::nimbus {

// ui/index.html, compiled in (nimbus/CMakeLists.txt), so a nimbus serves its
// web UI at / with no files to install.
std::string_view WebUiIndexHtml();

// The Content-Security-Policy the UI page is served with: nothing from
// elsewhere, no framing, API calls to this origin only, and only the page's
// own inline <script> and <style> blocks (by their SHA-256), so injected
// markup can run no script. Computed from `html`; the second form is the
// policy of WebUiIndexHtml(), computed once. Any thread.
std::string WebUiContentSecurityPolicy(std::string_view html);
const std::string& WebUiContentSecurityPolicy();

}  // namespace tempest::nimbus

#endif  // TEMPEST_NIMBUS_WEB_UI_H_
