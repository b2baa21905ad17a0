// The allocation counter behind INFO's used_memory and maxmemory
// (server/used_memory.h): it follows every allocation function, across
// threads, and costs a read of a few counters, whatever the heap holds.
#include "server/used_memory.h"

#include <gtest/gtest.h>
#include <malloc.h>

#include <cstdlib>
#include <thread>
#include <vector>

namespace latch {
namespace {

constexpr size_t kUsedMemoryChunk = 1 << 20;

// Allocations the compiler cannot see through.
void* (*volatile g_malloc)(size_t) = std::malloc;
void (*volatile g_free)(void*) = std::free;

class UsedMemoryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!used_memory::Counted()) GTEST_SKIP() << "a sanitizer's allocator: not counted";
  }
  // The counter moved by `expected` (within slack: the test's own small
  // allocations, gtest's, run alongside).
  static void ExpectMoved(uint64_t before, int64_t expected) {
    const int64_t moved = static_cast<int64_t>(used_memory::Bytes()) - static_cast<int64_t>(before);
    EXPECT_NEAR(static_cast<double>(moved), static_cast<double>(expected), 64 * 1024)
        << "moved " << moved << ", expected " << expected;
  }
};

TEST_F(UsedMemoryTest, FollowsMallocFreeCallocAndRealloc) {
  uint64_t before = used_memory::Bytes();
  void* p = g_malloc(kUsedMemoryChunk);
  ExpectMoved(before, static_cast<int64_t>(malloc_usable_size(p)));
  p = std::realloc(p, 4 * kUsedMemoryChunk);
  ExpectMoved(before, static_cast<int64_t>(malloc_usable_size(p)));
  g_free(p);
  ExpectMoved(before, 0);

  void* c = std::calloc(kUsedMemoryChunk, 2);
  ExpectMoved(before, static_cast<int64_t>(malloc_usable_size(c)));
  EXPECT_EQ(std::realloc(c, 0), nullptr);  // glibc: frees
  ExpectMoved(before, 0);
}

TEST_F(UsedMemoryTest, FollowsTheAlignedAllocators) {
  const uint64_t before = used_memory::Bytes();
  void* a = std::aligned_alloc(4096, kUsedMemoryChunk);
  void* b = nullptr;
  ASSERT_EQ(posix_memalign(&b, 64, kUsedMemoryChunk), 0);
  void* c = memalign(256, kUsedMemoryChunk);
  ExpectMoved(before, static_cast<int64_t>(malloc_usable_size(a) + malloc_usable_size(b) +
                                           malloc_usable_size(c)));
  std::free(a);
  std::free(b);
  std::free(c);
  ExpectMoved(before, 0);
}

TEST_F(UsedMemoryTest, SumsThreadsThatFreeWhatOthersAllocated) {
  const uint64_t before = used_memory::Bytes();
  std::vector<void*> blocks(64);
  size_t usable = 0;
  std::thread allocating([&] {
    for (void*& b : blocks) b = g_malloc(64 * 1024);
  });
  allocating.join();
  for (void* b : blocks) usable += malloc_usable_size(b);
  ExpectMoved(before, static_cast<int64_t>(usable));
  std::thread freeing([&] {
    for (void* b : blocks) g_free(b);
  });
  freeing.join();
  ExpectMoved(before, 0);
}

}  // namespace
}  // namespace latch
