#ifndef TEMPEST_TESTS_SUPPORT_TEMP_DIR_H_
#define TEMPEST_TESTS_SUPPORT_TEMP_DIR_H_

#include <string>

namespace tempest::testing {

// A fresh directory under $TMPDIR (or /tmp), removed with its contents on
// destruction unless TEMPEST_KEEP_TEST_DIRS is set (for post-mortems).
class TempDir {
 public:
  explicit TempDir(const std::string& prefix = "tempest-test");
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::string& path() const { return path_; }
  std::string File(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

// A free TCP port on 127.0.0.1; aborts the test binary if none can be found.
int FreePort();

}  // namespace tempest::testing

#endif  // TEMPEST_TESTS_SUPPORT_TEMP_DIR_H_
