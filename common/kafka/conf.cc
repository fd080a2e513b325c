#include "common/kafka/conf.h"

#include <librdkafka/rdkafka.h>

#include "absl/strings/substitute.h"
#include "common/core/status_macros.h"

namespace tempest::kafka {

absl::StatusOr<ConfHandle> BuildConf(const Settings& settings, std::string_view error_format) {
  ConfHandle conf(rd_kafka_conf_new());
  RETURN_IF_ERROR(ApplySettings(*conf, settings, error_format));
  return conf;
}

absl::Status ApplySettings(rd_kafka_conf_t& conf, const Settings& settings,
                           std::string_view error_format) {
  char err[512];
  for (const auto& [key, value] : settings) {
    if (rd_kafka_conf_set(&conf, key.c_str(), value.c_str(), err, sizeof(err)) !=
        RD_KAFKA_CONF_OK) {
      const absl::string_view format(error_format.data(), error_format.size());
      return absl::InvalidArgumentError(absl::Substitute(format, key, err));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<ClientHandle> NewClient(ClientType type, ConfHandle conf) {
  char err[512];
  ClientHandle client(rd_kafka_new(
      type == ClientType::kProducer ? RD_KAFKA_PRODUCER : RD_KAFKA_CONSUMER, conf.get(), err,
      sizeof(err)));
  if (client == nullptr) return absl::InvalidArgumentError(err);  // the conf is still ours
  (void)conf.release();  // the client owns it now
  return client;
}

std::string_view ErrorText(int error_code) {
  return rd_kafka_err2str(static_cast<rd_kafka_resp_err_t>(error_code));
}

}  // namespace tempest::kafka
