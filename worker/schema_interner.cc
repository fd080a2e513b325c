#include "worker/schema_interner.h"

#include <map>
#include <mutex>
#include <string>
#include <tuple>
#include <vector>

namespace tempest::worker {

std::shared_ptr<const api::StreamSchema> InternSchema(const api::ComponentId& component,
                                                      const api::StreamId& stream,
                                                      const api::Fields& fields) {
  using Key = std::tuple<std::string, std::string, std::vector<std::string>>;
  static std::mutex* const mu = new std::mutex();
  // Never destroyed: tuples may outlive everything else, up to process exit.
  static auto* const schemas = new std::map<Key, const api::StreamSchema*>();
  std::lock_guard<std::mutex> lock(*mu);
  Key key{component.value(), stream.value(), fields.names()};
  auto it = schemas->find(key);
  if (it == schemas->end()) {
    it = schemas->emplace(std::move(key), new api::StreamSchema{component, stream, fields}).first;
  }
  // Aliasing constructor with an empty owner: no control block, no refcount.
  return std::shared_ptr<const api::StreamSchema>(std::shared_ptr<const void>(), it->second);
}

}  // namespace tempest::worker
