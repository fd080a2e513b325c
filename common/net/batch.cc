#include "common/net/batch.h"

namespace tempest::net {

void Batch::Add(int32_t task_id, std::string_view bytes) {
  const uint32_t task = static_cast<uint32_t>(task_id);
  const uint32_t len = static_cast<uint32_t>(bytes.size());
  const char prefix[kPerMessageOverhead] = {
      static_cast<char>(task & 0xff),         static_cast<char>((task >> 8) & 0xff),
      static_cast<char>((task >> 16) & 0xff), static_cast<char>((task >> 24) & 0xff),
      static_cast<char>(len & 0xff),          static_cast<char>((len >> 8) & 0xff),
      static_cast<char>((len >> 16) & 0xff),  static_cast<char>((len >> 24) & 0xff)};
  payload_.append(prefix, sizeof(prefix));
  payload_.append(bytes.data(), bytes.size());
  ++count_;
}

void Batch::Clear() {
  payload_.clear();
  count_ = 0;
}

}  // namespace tempest::net
