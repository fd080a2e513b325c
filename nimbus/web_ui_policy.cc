#include <openssl/sha.h>

#include <string>
#include <string_view>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "common/api/string_view_compat.h"
#include "nimbus/web_ui.h"

namespace tempest::nimbus {
namespace {

// "'sha256-BASE64'" of each element `tag` (script or style) written inline
// in `html`, space-separated. The page is ours and has no attributes on
// these tags, so a plain search for "<tag>" finds each one.
std::string InlineHashes(std::string_view html, std::string_view tag) {
  const std::string open = absl::StrCat("<", api::Sv(tag), ">");
  const std::string close = absl::StrCat("</", api::Sv(tag), ">");
  std::string sources;
  for (size_t at = html.find(open); at != std::string_view::npos; at = html.find(open, at)) {
    const size_t start = at + open.size();
    const size_t end = html.find(close, start);
    if (end == std::string_view::npos) break;
    unsigned char digest[SHA256_DIGEST_LENGTH];
    SHA256(reinterpret_cast<const unsigned char*>(html.data() + start), end - start, digest);
    absl::StrAppend(
        &sources, sources.empty() ? "" : " ", "'sha256-",
        absl::Base64Escape(absl::string_view(reinterpret_cast<const char*>(digest), sizeof digest)),
        "'");
    at = end + close.size();
  }
  return sources.empty() ? "'none'" : sources;
}

}  // namespace

std::string WebUiContentSecurityPolicy(std::string_view html) {
  return absl::StrCat("default-src 'none'; script-src ", InlineHashes(html, "script"),
                      "; style-src ", InlineHashes(html, "style"),
                      "; connect-src 'self'; img-src 'self'; base-uri 'none'; "
                      "form-action 'none'; frame-ancestors 'none'");
}

const std::string& WebUiContentSecurityPolicy() {
  static const std::string* const kPolicy =
      new std::string(WebUiContentSecurityPolicy(WebUiIndexHtml()));
  return *kPolicy;
}

}  // namespace tempest::nimbus
