// The io_uring wrapper (server/uring.h) on its own, without a loop: a
// refused ring reports why (the server then keeps the epoll path), a
// multishot receive delivers bytes in provided buffers, a send goes out,
// and completions an owner refuses come again later, in order.
#include "server/uring.h"

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <string>
#include <vector>

namespace latch {
namespace {

struct UringEvent {
  unsigned kind;
  int res;
  std::string bytes;
  bool more;
};

// What the handler saw; refuse_left: how many completions to refuse first.
struct UringRecorder {
  std::vector<UringEvent> events;
  int refuse_left = 0;
};
UringRecorder* uring_recorder = nullptr;

bool RecordCompletion(IoRing& ring, void* owner, unsigned kind, int res, unsigned flags) {
  EXPECT_EQ(owner, uring_recorder);
  if (uring_recorder->refuse_left > 0) {
    --uring_recorder->refuse_left;
    return false;
  }
  UringEvent e{kind, res, {}, (flags & IORING_CQE_F_MORE) != 0};
  if (IoRing::HasBuffer(flags)) {
    if (res > 0) e.bytes.assign(ring.Buffer(flags), static_cast<size_t>(res));
    ring.ReturnBuffer(flags);
  }
  if (!e.more) ring.OpEnded();
  uring_recorder->events.push_back(e);
  return true;
}

class UringTest : public ::testing::Test {
 protected:
  void SetUp() override {
    uring_recorder = &recorder_;
    ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM, 0, fds_), 0);
    std::string error;
    ring_ = IoRing::Create(64, RecordCompletion, &error);
    ASSERT_NE(ring_, nullptr) << error;
  }
  void TearDown() override {
    ring_.reset();
    ::close(fds_[0]);
    ::close(fds_[1]);
    uring_recorder = nullptr;
  }
  void ArmRecv() {
    io_uring_sqe* sqe = ring_->Sqe(IoRing::Tag(&recorder_, 1));
    io_uring_prep_recv_multishot(sqe, fds_[0], nullptr, 0, 0);
    sqe->flags |= IOSQE_BUFFER_SELECT;
    sqe->buf_group = IoRing::kGroup;
    ring_->OpStarted();
    ring_->Submit();
  }
  std::string Received() {
    std::string all;
    for (const auto& e : recorder_.events) {
      if (e.kind == 1) all += e.bytes;
    }
    return all;
  }

  UringRecorder recorder_;
  int fds_[2] = {-1, -1};
  std::unique_ptr<IoRing> ring_;
};

TEST(UringCreateTest, AKernelRefusalIsReportedNotFatal) {
  // More entries than any kernel takes (IORING_MAX_ENTRIES is 32768): the
  // same path as ENOSYS or EPERM under seccomp — nullptr and the reason.
  std::string error;
  auto ring = IoRing::Create(1u << 20, RecordCompletion, &error);
  EXPECT_EQ(ring, nullptr);
  EXPECT_EQ(error, "io_uring_queue_init: Invalid argument");
}

TEST_F(UringTest, MultishotReceiveDeliversEveryByteInOrder) {
  ArmRecv();
  // More than one provided buffer's worth, in several writes.
  std::string sent;
  for (int i = 0; i < 5; ++i) {
    std::string chunk(IoRing::kBufferSize / 2 + 7, static_cast<char>('a' + i));
    ASSERT_EQ(::write(fds_[1], chunk.data(), chunk.size()), static_cast<ssize_t>(chunk.size()));
    sent += chunk;
  }
  while (Received().size() < sent.size()) {
    ring_->Wait();
    ring_->Reap();
  }
  EXPECT_EQ(Received(), sent);
  // Still armed: every completion so far said more will come.
  for (const auto& e : recorder_.events) EXPECT_TRUE(e.more);
  EXPECT_EQ(ring_->in_flight(), 1u);
  // The peer's close ends it: res 0, no IORING_CQE_F_MORE.
  ::shutdown(fds_[1], SHUT_WR);
  while (ring_->in_flight() > 0) {
    ring_->Wait();
    ring_->Reap();
  }
  EXPECT_EQ(recorder_.events.back().res, 0);
  EXPECT_FALSE(recorder_.events.back().more);
}

TEST_F(UringTest, SendsGoOutWithOneSubmit) {
  const std::string a = "+OK\r\n", b = ":1\r\n";
  io_uring_prep_send(ring_->Sqe(IoRing::Tag(&recorder_, 2)), fds_[0], a.data(), a.size(), 0);
  io_uring_prep_send(ring_->Sqe(IoRing::Tag(&recorder_, 2)), fds_[0], b.data(), b.size(), 0);
  ring_->OpStarted();
  ring_->OpStarted();
  EXPECT_EQ(ring_->queued(), 2u);
  const uint64_t submits = ring_->submits();
  ring_->Drain();
  EXPECT_EQ(ring_->submits(), submits + 1);
  ASSERT_EQ(recorder_.events.size(), 2u);
  EXPECT_EQ(recorder_.events[0].res, 5);
  EXPECT_EQ(recorder_.events[1].res, 4);
  char buf[16] = {};
  ASSERT_EQ(::read(fds_[1], buf, sizeof(buf)), 9);
  EXPECT_EQ(std::string(buf, 9), a + b);
}

TEST_F(UringTest, RefusedCompletionsComeAgainInOrder) {
  ArmRecv();
  ASSERT_EQ(::write(fds_[1], "one", 3), 3);
  // Its owner is running a request: the completion is refused, and kept.
  recorder_.refuse_left = 2;
  while (recorder_.refuse_left > 1) {
    ring_->Wait();
    ring_->Reap();
  }
  EXPECT_TRUE(recorder_.events.empty());
  // Newer bytes come; the old completion is refused once more, and the new
  // one waits behind it without being offered (though it would be taken).
  ASSERT_EQ(::write(fds_[1], "two", 3), 3);
  ring_->Wait();
  ring_->Reap();
  EXPECT_EQ(recorder_.refuse_left, 0);
  EXPECT_TRUE(recorder_.events.empty());
  // The next reap delivers both, oldest first.
  ring_->Reap();
  EXPECT_EQ(Received(), "onetwo");
}

}  // namespace
}  // namespace latch
