#include "common/net/static_files.h"

#include <filesystem>
#include <fstream>

#include "gtest/gtest.h"
#include "tests/support/temp_dir.h"

namespace tempest::net {
namespace {

void Write(const std::string& path, const std::string& content) {
  std::ofstream(path, std::ios::binary) << content;
}

class StaticFilesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::filesystem::create_directories(dir_.File("ui/js"));
    Write(dir_.File("ui/index.html"), "<html>tempest</html>");
    Write(dir_.File("ui/js/app.js"), "console.log(1)");
    Write(dir_.File("secret.txt"), "outside the root");
    std::filesystem::create_symlink(dir_.File("secret.txt"), dir_.File("ui/escape.txt"));
    auto files = StaticFiles::Create(dir_.File("ui"));
    ASSERT_TRUE(files.ok()) << files.status();
    files_ = *std::move(files);
  }

  testing::TempDir dir_{"net-static"};
  std::unique_ptr<StaticFiles> files_;
};

TEST_F(StaticFilesTest, ServesIndexAndFilesWithContentTypes) {
  auto index = files_->Read("/");
  ASSERT_TRUE(index.ok()) << index.status();
  EXPECT_EQ(index->body, "<html>tempest</html>");
  EXPECT_EQ(index->content_type, "text/html; charset=utf-8");
  auto js = files_->Read("/js/app.js");
  ASSERT_TRUE(js.ok());
  EXPECT_EQ(js->content_type, "application/javascript; charset=utf-8");
  EXPECT_EQ(files_->Read("/js/missing.js").status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(files_->Read("/js").status().code(), absl::StatusCode::kNotFound);  // no index
}

TEST_F(StaticFilesTest, RefusesTraversalInEveryDisguise) {
  for (const char* path :
       {"/../secret.txt", "/js/../../secret.txt", "/%2e%2e/secret.txt", "/%2E%2E%2Fsecret.txt",
        "/js/..%2f..%2fsecret.txt", "/./index.html", "/..\\secret.txt", "/index.html%00.js"}) {
    auto r = files_->Read(path);
    EXPECT_EQ(r.status().code(), absl::StatusCode::kPermissionDenied) << path;
  }
  // A symlink inside the root that points outside it.
  EXPECT_EQ(files_->Read("/escape.txt").status().code(), absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(files_->Read("/%zz").status().code(), absl::StatusCode::kInvalidArgument);
}

TEST_F(StaticFilesTest, CreateRejectsMissingDirectory) {
  EXPECT_FALSE(StaticFiles::Create(dir_.File("nope")).ok());
  EXPECT_FALSE(StaticFiles::Create(dir_.File("secret.txt")).ok());
}

}  // namespace
}  // namespace tempest::net
