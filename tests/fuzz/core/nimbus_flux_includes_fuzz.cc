// Fuzzes the Flux text nimbus receives from a REST caller, as nimbus loads it
// (core::LoadTopologySource with no options, which is what
// TopologyStore::Prepare and every worker use), with `includes` in front:
// whatever the text names, nimbus must not look at its own disk. The path
// calls of the C library (open, fopen, stat, access, ...) are wrapped in
// this binary and count every call made while the input is loaded; any call
// is a finding (the target aborts, naming the path). Planted files next to
// the topology's file name hold a distinctive line that no error may ever
// contain. Every input is loaded twice: as it is, and with its first line
// as the path of an include.

#include <dlfcn.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <map>
#include <string>
#include <string_view>

#include "common/core/flux/flux_loader.h"
#include "common/core/flux/stored_topology.h"

namespace {

constexpr char kSecret[] = "TEMPEST-PLANTED-SECRET-fz71";

// Set while an input is loaded; the wrappers below report any path call.
bool g_armed = false;
// Every path call seen, armed or not: proof the wrappers are in effect.
int g_calls = 0;

void Tripped(const char* call, const char* path) {
  ++g_calls;
  if (!g_armed) return;
  fprintf(stderr, "nimbus-side Flux loading called %s(\"%s\")\n", call,
          path != nullptr ? path : "(null)");
  abort();
}

template <typename F>
F Real(const char* name) {
  return reinterpret_cast<F>(dlsym(RTLD_NEXT, name));
}

// A folder with files an include could name, made once per process (and
// never destroyed, so the exit handler that removes it can still name it).
const std::string& PlantedDir() {
  static const std::string* const dir = [] {
    const char* tmp = getenv("TMPDIR");
    auto* templ = new std::string(std::string(tmp != nullptr ? tmp : "/tmp") +
                                  "/nimbus-includes-XXXXXX");
    if (mkdtemp(templ->data()) == nullptr) abort();
    const int before = g_calls;
    std::ofstream(*templ + "/secret.yaml") << "name: " << kSecret << "\nconfig:\n  a: 1\n";
    std::ofstream(*templ + "/shadow") << "root:$6$" << kSecret << ":19000:0:99999:7:::\n";
    struct stat st;
    if (g_calls == before || stat((*templ + "/shadow").c_str(), &st) != 0 ||
        g_calls < before + 3) {
      fprintf(stderr, "the path-call wrappers are not in effect; this target would prove nothing\n");
      abort();
    }
    atexit([] {
      const std::string& d = PlantedDir();
      unlink((d + "/secret.yaml").c_str());
      unlink((d + "/shadow").c_str());
      rmdir(d.c_str());
    });
    return templ;
  }();
  return *dir;
}

void Check(const absl::Status& status) {
  if (status.ok()) return;
  const std::string message(status.message());
  if (message.find(kSecret) != std::string::npos) {
    fprintf(stderr, "an error quotes a planted file: %s\n", message.c_str());
    abort();
  }
}

void LoadAsNimbus(std::string_view text, const std::string& file_name) {
  static const std::map<std::string, std::string> kOverrides = {{"topology.workers", "2"}};
  tempest::core::TopologySource source{.flux_text = text,
                                       .file_name = file_name,
                                       .name_override = "",
                                       .config_overrides = &kOverrides};
  g_armed = true;
  absl::StatusOr<tempest::core::TopologyDef> def = tempest::core::LoadTopologySource(source);
  g_armed = false;
  Check(def.status());
}

}  // namespace

// The C library's path calls, as this binary sees them (a definition here
// takes precedence over the sanitizers' weak interceptors and libc's).
extern "C" {

int open(const char* path, int flags, ...) {
  Tripped("open", path);
  va_list ap;
  va_start(ap, flags);
  const mode_t mode = (flags & (O_CREAT | O_TMPFILE)) != 0 ? va_arg(ap, mode_t) : 0;
  va_end(ap);
  return Real<int (*)(const char*, int, ...)>("open")(path, flags, mode);
}
int open64(const char* path, int flags, ...) {
  Tripped("open64", path);
  va_list ap;
  va_start(ap, flags);
  const mode_t mode = (flags & (O_CREAT | O_TMPFILE)) != 0 ? va_arg(ap, mode_t) : 0;
  va_end(ap);
  return Real<int (*)(const char*, int, ...)>("open64")(path, flags, mode);
}
int openat(int dir, const char* path, int flags, ...) {
  Tripped("openat", path);
  va_list ap;
  va_start(ap, flags);
  const mode_t mode = (flags & (O_CREAT | O_TMPFILE)) != 0 ? va_arg(ap, mode_t) : 0;
  va_end(ap);
  return Real<int (*)(int, const char*, int, ...)>("openat")(dir, path, flags, mode);
}
FILE* fopen(const char* path, const char* mode) {
  Tripped("fopen", path);
  return Real<FILE* (*)(const char*, const char*)>("fopen")(path, mode);
}
FILE* fopen64(const char* path, const char* mode) {
  Tripped("fopen64", path);
  return Real<FILE* (*)(const char*, const char*)>("fopen64")(path, mode);
}
int stat(const char* path, struct stat* out) {
  Tripped("stat", path);
  return Real<int (*)(const char*, struct stat*)>("stat")(path, out);
}
int stat64(const char* path, struct stat64* out) {
  Tripped("stat64", path);
  return Real<int (*)(const char*, struct stat64*)>("stat64")(path, out);
}
int lstat(const char* path, struct stat* out) {
  Tripped("lstat", path);
  return Real<int (*)(const char*, struct stat*)>("lstat")(path, out);
}
int lstat64(const char* path, struct stat64* out) {
  Tripped("lstat64", path);
  return Real<int (*)(const char*, struct stat64*)>("lstat64")(path, out);
}
int access(const char* path, int mode) {
  Tripped("access", path);
  return Real<int (*)(const char*, int)>("access")(path, mode);
}

}  // extern "C"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  // libFuzzer learns the marker from the comparison in Check and writes it
  // into inputs; an error quoting the input's own text is no leak.
  if (text.find(kSecret) != std::string_view::npos) return 0;
  const std::string file_name = PlantedDir() + "/topology.yaml";
  LoadAsNimbus(text, file_name);

  // The first line as an include's path (relative ones would resolve in the
  // planted folder); the rest of the input after it.
  const size_t eol = text.find('\n');
  const std::string_view path = text.substr(0, eol);
  const std::string_view rest = eol == std::string_view::npos ? "" : text.substr(eol + 1);
  std::string with_include = "includes:\n  - file: \"";
  for (char c : path) {
    if (c == '"' || c == '\\') with_include += '\\';
    with_include += c;
  }
  with_include += "\"\n    resource: true\n";
  with_include.append(rest);
  LoadAsNimbus(with_include, file_name);
  return 0;
}
