#ifndef TEMPEST_CLI_LOG_FORMAT_H_
#define TEMPEST_CLI_LOG_FORMAT_H_

namespace tempest::cli {

// Makes every log line this process writes through spdlog show its message
// with control characters escaped (core::EscapeLogText): topology code,
// multilang children and component errors put foreign text into messages,
// and one message must stay one line, with no escape sequences for the
// terminal of whoever reads the log. Keeps spdlog's default pattern. Call
// once, first thing in main(); loggers made later inherit it.
void InstallEscapingLogFormatter();

}  // namespace tempest::cli

#endif  // TEMPEST_CLI_LOG_FORMAT_H_
