#include "common/os/unique_fd.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <utility>

#include "gtest/gtest.h"

namespace tempest::os {
namespace {

bool IsOpen(int fd) { return ::fcntl(fd, F_GETFD) != -1 || errno != EBADF; }

int OpenDevNull() { return ::open("/dev/null", O_RDONLY | O_CLOEXEC); }

TEST(UniqueFdTest, ClosesOnDestruction) {
  int raw = -1;
  {
    UniqueFd fd(OpenDevNull());
    raw = fd.get();
    ASSERT_TRUE(fd.valid());
    EXPECT_TRUE(IsOpen(raw));
  }
  EXPECT_FALSE(IsOpen(raw));
}

TEST(UniqueFdTest, DefaultHoldsNothing) {
  UniqueFd fd;
  EXPECT_FALSE(fd.valid());
  EXPECT_EQ(fd.get(), -1);
  EXPECT_EQ(fd.Release(), -1);
  EXPECT_EQ(fd.Close(), 0);
}

TEST(UniqueFdTest, MoveTransfersOwnership) {
  UniqueFd a(OpenDevNull());
  const int raw = a.get();
  UniqueFd b(std::move(a));
  EXPECT_FALSE(a.valid());  // NOLINT(bugprone-use-after-move): checking the moved-from state
  EXPECT_EQ(b.get(), raw);

  UniqueFd c(OpenDevNull());
  const int other = c.get();
  c = std::move(b);  // closes what c held
  EXPECT_EQ(c.get(), raw);
  EXPECT_FALSE(IsOpen(other));
  EXPECT_TRUE(IsOpen(raw));
}

TEST(UniqueFdTest, ReleaseHandsTheDescriptorOver) {
  UniqueFd fd(OpenDevNull());
  const int raw = fd.Release();
  EXPECT_FALSE(fd.valid());
  EXPECT_TRUE(IsOpen(raw));
  UniqueFd again(raw);  // closed by the test's own owner
}

TEST(UniqueFdTest, ResetClosesTheOldAndHoldsTheNew) {
  UniqueFd fd(OpenDevNull());
  const int first = fd.get();
  const int second = OpenDevNull();
  fd.Reset(second);
  EXPECT_FALSE(IsOpen(first));
  EXPECT_EQ(fd.get(), second);
  fd.Reset();
  EXPECT_FALSE(fd.valid());
  EXPECT_FALSE(IsOpen(second));
}

TEST(UniqueFdTest, CloseReportsTheResult) {
  UniqueFd fd(OpenDevNull());
  const int raw = fd.get();
  EXPECT_EQ(fd.Close(), 0);
  EXPECT_FALSE(fd.valid());
  EXPECT_FALSE(IsOpen(raw));
}

TEST(PipeTest, BothEndsAreOwnedAndConnected) {
  int read_end = -1;
  int write_end = -1;
  {
    absl::StatusOr<Pipe> pipe = MakePipe();
    ASSERT_TRUE(pipe.ok()) << pipe.status();
    read_end = pipe->read.get();
    write_end = pipe->write.get();
    EXPECT_NE(::fcntl(read_end, F_GETFD) & FD_CLOEXEC, 0);
    ASSERT_EQ(::write(write_end, "x", 1), 1);
    pipe->write.Reset();
    char c = 0;
    EXPECT_EQ(::read(read_end, &c, 1), 1);
    EXPECT_EQ(c, 'x');
    EXPECT_EQ(::read(read_end, &c, 1), 0);  // the writer is closed: end of file
  }
  EXPECT_FALSE(IsOpen(read_end));
  EXPECT_FALSE(IsOpen(write_end));
}

}  // namespace
}  // namespace tempest::os
