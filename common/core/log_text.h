#ifndef TEMPEST_COMMON_CORE_LOG_TEXT_H_
#define TEMPEST_COMMON_CORE_LOG_TEXT_H_

#include <cstdint>
#include <string>
#include <string_view>

namespace tempest::core {

// Text that came from outside Tempest (topology code, a multilang child, a
// component's error) as it may appear in one log line: a newline, an escape
// sequence or any other control character could forge log lines of its own
// or drive the terminal of whoever reads the log. Every C0 control, DEL, the
// C1 controls and the Unicode line and paragraph separators are written as
// `\n`, `\r`, `\t` or `\xNN` / `\uNNNN`; a byte that is not valid UTF-8 as
// `\xNN`. Everything else, backslashes included, is kept as it is: a
// backslash cannot end a line or move a cursor. Pure; any thread.
std::string EscapeLogText(std::string_view text);

// Whether EscapeLogText would change `text` (a fast scan for the common
// case, where there is nothing to escape).
bool LogTextNeedsEscaping(std::string_view text);

// A count and its noun, in the number the count asks for: Counted(1, "slot")
// is "1 slot", Counted(4, "slot") "4 slots", Counted(0, "topology",
// "topologies") "0 topologies". `plural` defaults to `singular` + "s". Every
// message with a count goes through this, so none reads "1 slots".
std::string Counted(int64_t n, std::string_view singular, std::string_view plural = {});

}  // namespace tempest::core

#endif  // TEMPEST_COMMON_CORE_LOG_TEXT_H_
