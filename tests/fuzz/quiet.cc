// Linked into every fuzz target: silences the loggers of the code under test
// (spdlog, protobuf), whose warnings about each rejected input would
// otherwise dominate a fuzzing run's time and output.

#include <string>

#include "google/protobuf/stubs/logging.h"
#include "spdlog/spdlog.h"

extern "C" int LLVMFuzzerInitialize(int* /*argc*/, char*** /*argv*/) {
  spdlog::set_level(spdlog::level::off);
  google::protobuf::SetLogHandler(
      [](google::protobuf::LogLevel, const char*, int, const std::string&) {});
  return 0;
}
