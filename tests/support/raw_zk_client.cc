#include "tests/support/raw_zk_client.h"

#include <thread>

#include "tests/support/eventually.h"

namespace tempest::testing {
namespace {
void IgnoreWatch(zhandle_t*, int, int, const char*, void*) {}
}  // namespace

std::unique_ptr<RawZkClient> RawZkClient::Connect(const std::string& hosts,
                                                  int session_timeout_ms,
                                                  std::chrono::milliseconds timeout) {
  zoo_set_debug_level(ZOO_LOG_LEVEL_ERROR);
  zhandle_t* zh = zookeeper_init(hosts.c_str(), IgnoreWatch, session_timeout_ms, nullptr,
                                 nullptr, 0);
  if (zh == nullptr) return nullptr;
  auto client = std::unique_ptr<RawZkClient>(new RawZkClient(zh));
  if (!Eventually(timeout, [&] { return zoo_state(zh) == ZOO_CONNECTED_STATE; })) return nullptr;
  return client;
}

RawZkClient::~RawZkClient() { zookeeper_close(zh_); }

int RawZkClient::Create(const std::string& path, const std::string& data, int flags) {
  return zoo_create(zh_, path.c_str(), data.data(), static_cast<int>(data.size()),
                    &ZOO_OPEN_ACL_UNSAFE, flags, nullptr, 0);
}

std::pair<int, std::string> RawZkClient::Get(const std::string& path) {
  std::string buf(1 << 20, '\0');
  int len = static_cast<int>(buf.size());
  int rc = zoo_get(zh_, path.c_str(), 0, buf.data(), &len, nullptr);
  buf.resize(rc == ZOK && len > 0 ? static_cast<size_t>(len) : 0);
  return {rc, buf};
}

int RawZkClient::Set(const std::string& path, const std::string& data, int version) {
  return zoo_set(zh_, path.c_str(), data.data(), static_cast<int>(data.size()), version);
}

int RawZkClient::Exists(const std::string& path) {
  return zoo_exists(zh_, path.c_str(), 0, nullptr);
}

}  // namespace tempest::testing
