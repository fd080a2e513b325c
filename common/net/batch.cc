#include "common/net/batch.h"

namespace tempest::net {

void Batch::WritePrefix(char* at, int32_t task_id, uint32_t length) {
  const uint32_t task = static_cast<uint32_t>(task_id);
  for (int i = 0; i < 4; ++i) {
    at[i] = static_cast<char>((task >> (8 * i)) & 0xff);
    at[4 + i] = static_cast<char>((length >> (8 * i)) & 0xff);
  }
}

void Batch::Add(int32_t task_id, std::string_view bytes) {
  const size_t start = payload_.size();
  payload_.resize(start + kPerMessageOverhead);
  WritePrefix(payload_.data() + start, task_id, static_cast<uint32_t>(bytes.size()));
  payload_.append(bytes.data(), bytes.size());
  ++count_;
}

void Batch::Clear() {
  payload_.clear();
  count_ = 0;
}

}  // namespace tempest::net
