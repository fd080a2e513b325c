#ifndef TEMPEST_COMMON_NET_BATCH_H_
#define TEMPEST_COMMON_NET_BATCH_H_

#include <cstdint>
#include <string>
#include <string_view>

namespace tempest::net {

// One message of a batch as seen by a receiver: the destination task and the
// opaque bytes (the worker's serialized tuple). `bytes` points into the
// receiver's read buffer and is valid only during the receive callback.
struct Message {
  int32_t task_id = 0;
  std::string_view bytes;
};

// A batch of messages addressed to tasks of one remote worker, already laid
// out in the wire format of a frame payload (per message: task id int32 LE,
// length uint32 LE, bytes), so sending it costs no re-encoding. Owns its
// buffer. Not thread-safe; a batch is filled by one thread and then handed to
// TransportClient::Send, which moves it.
class Batch {
 public:
  static constexpr size_t kPerMessageOverhead = 8;

  Batch() = default;
  Batch(Batch&&) = default;
  Batch& operator=(Batch&&) = default;
  Batch(const Batch&) = default;
  Batch& operator=(const Batch&) = default;

  void Reserve(size_t payload_bytes) { payload_.reserve(payload_bytes); }
  // Appends one message. Messages of one batch are delivered in this order.
  void Add(int32_t task_id, std::string_view bytes);
  // Appends one message whose bytes `encode(std::string& payload)` appends
  // to the batch's own buffer, so a sender encodes straight into the frame
  // payload instead of into a scratch buffer that Add would copy. When
  // `encode` returns false the batch is left as it was.
  template <typename Encode>
  bool AddEncoded(int32_t task_id, Encode&& encode) {
    const size_t start = payload_.size();
    payload_.resize(start + kPerMessageOverhead);
    if (!encode(payload_)) {
      payload_.resize(start);
      return false;
    }
    WritePrefix(payload_.data() + start, task_id,
                static_cast<uint32_t>(payload_.size() - start - kPerMessageOverhead));
    ++count_;
    return true;
  }
  void Clear();

  bool empty() const { return count_ == 0; }
  uint32_t message_count() const { return count_; }
  // Encoded payload size in bytes (what the frame's payload length will be).
  size_t payload_size() const { return payload_.size(); }
  const std::string& payload() const { return payload_; }

 private:
  // The message prefix: task id and length, both int32 LE.
  static void WritePrefix(char* at, int32_t task_id, uint32_t length);

  std::string payload_;
  uint32_t count_ = 0;
};

}  // namespace tempest::net

#endif  // TEMPEST_COMMON_NET_BATCH_H_
