#ifndef TEMPEST_COMMON_KAFKA_HANDLES_H_
#define TEMPEST_COMMON_KAFKA_HANDLES_H_

#include <memory>

// librdkafka's handle types, declared (exactly as rdkafka.h does) so that
// headers need not include librdkafka.
typedef struct rd_kafka_s rd_kafka_t;
typedef struct rd_kafka_conf_s rd_kafka_conf_t;
typedef struct rd_kafka_topic_s rd_kafka_topic_t;
typedef struct rd_kafka_topic_conf_s rd_kafka_topic_conf_t;
typedef struct rd_kafka_queue_s rd_kafka_queue_t;
typedef struct rd_kafka_message_s rd_kafka_message_t;
typedef struct rd_kafka_headers_s rd_kafka_headers_t;
typedef struct rd_kafka_topic_partition_list_s rd_kafka_topic_partition_list_t;
typedef struct rd_kafka_metadata rd_kafka_metadata_t;
typedef struct rd_kafka_mock_cluster_s rd_kafka_mock_cluster_t;

namespace tempest::kafka {

// Frees each librdkafka object with its own destroy function. Every owning
// librdkafka pointer in Tempest is one of the handles below: a raw pointer
// to a librdkafka object never owns it.
struct Deleter {
  void operator()(rd_kafka_t* p) const;
  void operator()(rd_kafka_conf_t* p) const;
  void operator()(rd_kafka_topic_t* p) const;
  void operator()(rd_kafka_topic_conf_t* p) const;
  void operator()(rd_kafka_queue_t* p) const;
  void operator()(rd_kafka_message_t* p) const;
  void operator()(rd_kafka_headers_t* p) const;
  void operator()(rd_kafka_topic_partition_list_t* p) const;
  void operator()(const rd_kafka_metadata_t* p) const;
  void operator()(rd_kafka_mock_cluster_t* p) const;
};

// A client (producer or consumer). Destroying it does not flush: owners that
// want queued records delivered flush first.
using ClientHandle = std::unique_ptr<rd_kafka_t, Deleter>;
using ConfHandle = std::unique_ptr<rd_kafka_conf_t, Deleter>;
// A topic handle must be destroyed before the client it came from.
using TopicHandle = std::unique_ptr<rd_kafka_topic_t, Deleter>;
using TopicConfHandle = std::unique_ptr<rd_kafka_topic_conf_t, Deleter>;
// A queue must be destroyed before the client it came from.
using QueueHandle = std::unique_ptr<rd_kafka_queue_t, Deleter>;
using MessageHandle = std::unique_ptr<rd_kafka_message_t, Deleter>;
using HeadersHandle = std::unique_ptr<rd_kafka_headers_t, Deleter>;
using PartitionListHandle = std::unique_ptr<rd_kafka_topic_partition_list_t, Deleter>;
using MetadataHandle = std::unique_ptr<const rd_kafka_metadata_t, Deleter>;
// A mock cluster must be destroyed before the client that hosts it.
using MockClusterHandle = std::unique_ptr<rd_kafka_mock_cluster_t, Deleter>;

}  // namespace tempest::kafka

#endif  // TEMPEST_COMMON_KAFKA_HANDLES_H_
