#include "common/kafka/handles.h"

#include <librdkafka/rdkafka.h>
#include <librdkafka/rdkafka_mock.h>

namespace tempest::kafka {

void Deleter::operator()(rd_kafka_t* p) const { rd_kafka_destroy(p); }
void Deleter::operator()(rd_kafka_conf_t* p) const { rd_kafka_conf_destroy(p); }
void Deleter::operator()(rd_kafka_topic_t* p) const { rd_kafka_topic_destroy(p); }
void Deleter::operator()(rd_kafka_topic_conf_t* p) const { rd_kafka_topic_conf_destroy(p); }
void Deleter::operator()(rd_kafka_queue_t* p) const { rd_kafka_queue_destroy(p); }
void Deleter::operator()(rd_kafka_message_t* p) const { rd_kafka_message_destroy(p); }
void Deleter::operator()(rd_kafka_headers_t* p) const { rd_kafka_headers_destroy(p); }
void Deleter::operator()(rd_kafka_topic_partition_list_t* p) const {
  rd_kafka_topic_partition_list_destroy(p);
}
void Deleter::operator()(const rd_kafka_metadata_t* p) const { rd_kafka_metadata_destroy(p); }
void Deleter::operator()(rd_kafka_mock_cluster_t* p) const { rd_kafka_mock_cluster_destroy(p); }

}  // namespace tempest::kafka
