#ifndef TEMPEST_TESTS_SUPPORT_RAW_ZK_CLIENT_H_
#define TEMPEST_TESTS_SUPPORT_RAW_ZK_CLIENT_H_

#include <zookeeper/zookeeper.h>

#include <chrono>
#include <memory>
#include <string>
#include <utility>

namespace tempest::testing {

// The bare ZooKeeper C client with no Tempest code in between: tests use it
// to check fixtures and our formats independently of common/coord. Owns one
// handle; calls are synchronous. Not thread-safe.
class RawZkClient {
 public:
  // Connects and waits for the CONNECTED state; nullptr on timeout.
  static std::unique_ptr<RawZkClient> Connect(const std::string& hosts, int session_timeout_ms,
                                              std::chrono::milliseconds timeout);
  ~RawZkClient();

  zhandle_t* handle() const { return zh_; }
  int State() const { return zoo_state(zh_); }
  int64_t SessionId() const { return zoo_client_id(zh_)->client_id; }
  std::string Password() const {
    return std::string(zoo_client_id(zh_)->passwd, sizeof(zoo_client_id(zh_)->passwd));
  }

  int Create(const std::string& path, const std::string& data, int flags = 0);
  // (rc, data)
  std::pair<int, std::string> Get(const std::string& path);
  int Set(const std::string& path, const std::string& data, int version = -1);
  int Exists(const std::string& path);

 private:
  explicit RawZkClient(zhandle_t* zh) : zh_(zh) {}
  zhandle_t* zh_;
};

}  // namespace tempest::testing

#endif  // TEMPEST_TESTS_SUPPORT_RAW_ZK_CLIENT_H_
