// Fuzzes the HTTP server's request parsing and routing end to end: one
// HttpServer (REST API routes with echoing handlers, plus a static folder)
// runs for the whole process on 127.0.0.1; each input is written raw on a
// new connection, the write side is shut, and the reply is read to the end.
// The server must answer in HTTP (or close), keep serving the next input,
// and never serve a file from outside its static folder.

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <string_view>

#include "common/net/event_loop.h"
#include "common/net/http_server.h"
#include "tests/fuzz/net/routes.h"

namespace {

namespace net = tempest::net;

constexpr char kSecret[] = "fuzz-secret-outside-the-static-folder";

struct Server {
  std::string dir;
  std::unique_ptr<net::EventLoop> loop;
  std::unique_ptr<net::HttpServer> http;
};
Server* g_server = nullptr;  // started by the first input, kept for the process

void WriteFile(const std::string& path, std::string_view text) {
  std::ofstream(path, std::ios::binary) << text;
}

Server* Start() {
  auto* s = new Server;
  // Under $TMPDIR: run.sh points it into its own work folder, which it
  // removes even when a crash skipped this process's exit handler.
  const char* tmp = std::getenv("TMPDIR");
  std::string pattern = std::string(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") +
                        "/tempest-fuzz-http-XXXXXX";
  if (mkdtemp(pattern.data()) == nullptr) std::abort();
  s->dir = pattern;
  std::filesystem::create_directory(s->dir + "/www");
  WriteFile(s->dir + "/www/index.html", "<html>tempest</html>");
  WriteFile(s->dir + "/secret.txt", kSecret);
  std::atexit([] {
    std::error_code ec;  // removes only the folder this process made
    if (g_server != nullptr) std::filesystem::remove_all(g_server->dir, ec);
  });
  s->loop = net::EventLoop::Create("fuzz-http").value();
  net::HttpServerOptions options;
  options.body_limit_bytes = 64 << 10;
  options.header_limit_bytes = 8 << 10;
  options.idle_timeout = std::chrono::seconds(5);
  options.static_dir = s->dir + "/www";
  s->http = net::HttpServer::Create(*s->loop, options, tempest::fuzz::EchoRouter()).value();
  return s;
}

// Sends `bytes`, half-closes, and returns everything the server wrote until
// it closed (the server closes after EOF; 15 s without its close is a hang,
// a bound generous enough for a loaded machine).
std::string Exchange(int port, std::string_view bytes) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) std::abort();
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    std::fprintf(stderr, "the HTTP server stopped accepting connections\n");
    std::abort();
  }
  size_t sent = 0;
  while (sent < bytes.size()) {
    const ssize_t n = ::send(fd, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
    if (n <= 0) break;  // the server may close early (e.g. a 431 before the body)
    sent += static_cast<size_t>(n);
  }
  ::shutdown(fd, SHUT_WR);
  std::string reply;
  char buf[4096];
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(15);
  for (int i = 0; i < 100000; ++i) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    pollfd p{fd, POLLIN, 0};
    if (left.count() <= 0 || ::poll(&p, 1, static_cast<int>(left.count())) <= 0) {
      std::fprintf(stderr, "the HTTP server neither answered nor closed within 15 s\n");
      std::abort();
    }
    const ssize_t n = ::recv(fd, buf, sizeof(buf), 0);
    if (n <= 0) break;
    reply.append(buf, static_cast<size_t>(n));
  }
  ::close(fd);
  return reply;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (g_server == nullptr) g_server = Start();
  const std::string_view request(reinterpret_cast<const char*>(data), size);
  const std::string reply = Exchange(g_server->http->port(), request);
  if (!reply.empty() && reply.rfind("HTTP/1.1 ", 0) != 0) {
    std::fprintf(stderr, "a reply that is not HTTP/1.1: %.80s\n", reply.c_str());
    std::abort();
  }
  // (Error replies may quote the request, so a request naming the secret
  // itself proves nothing.)
  if (reply.find(kSecret) != std::string::npos && request.find(kSecret) == std::string_view::npos) {
    std::fprintf(stderr, "served a file from outside the static folder\n");
    std::abort();
  }
  return 0;
}
