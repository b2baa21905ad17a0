#include "server/used_memory.h"

#include <atomic>
#include <cstddef>

#if defined(__SANITIZE_ADDRESS__)
#define LATCH_OWN_ALLOCATOR 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(memory_sanitizer) || \
    __has_feature(thread_sanitizer)
#define LATCH_OWN_ALLOCATOR 1
#endif
#endif

#ifndef LATCH_OWN_ALLOCATOR

#include <dlfcn.h>
#include <malloc.h>

#include <cerrno>

// glibc's own entry points, which the wrappers below call (exported by
// libc.so.6 for exactly this: an interposed malloc that keeps glibc's).
extern "C" {
void* __libc_malloc(size_t size);
void __libc_free(void* p);
void* __libc_calloc(size_t n, size_t size);
void* __libc_realloc(void* p, size_t size);
void* __libc_valloc(size_t size);
void* __libc_pvalloc(size_t size);
}

namespace {

// One counter per thread (a thread only writes its own: no locked
// instruction on the allocation path); threads past kSlots share the last
// one, updated atomically. A thread may free what another allocated, so a
// slot can go negative: only the sum means anything.
constexpr int kSlots = 64;
struct alignas(64) Slot {
  std::atomic<int64_t> bytes{0};
};
Slot g_slots[kSlots];
std::atomic<int> g_next_slot{0};
thread_local int t_slot __attribute__((tls_model("initial-exec"))) = -1;

inline void Count(int64_t delta) {
  int s = t_slot;
  if (s < 0) {
    s = g_next_slot.fetch_add(1, std::memory_order_relaxed);
    if (s >= kSlots - 1) s = kSlots - 1;
    t_slot = s;
  }
  std::atomic<int64_t>& b = g_slots[s].bytes;
  if (s == kSlots - 1) {
    b.fetch_add(delta, std::memory_order_relaxed);
  } else {
    b.store(b.load(std::memory_order_relaxed) + delta, std::memory_order_relaxed);
  }
}

inline void* Counted(void* p) {
  if (p != nullptr) Count(static_cast<int64_t>(malloc_usable_size(p)));
  return p;
}

// The aligned allocators have no __libc_ entry point: glibc's own, found
// past this executable.
template <typename F>
F Next(const char* name) {
  return reinterpret_cast<F>(dlsym(RTLD_NEXT, name));
}

}  // namespace

extern "C" {

void* malloc(size_t size) {
  return Counted(__libc_malloc(size));
}

void free(void* p) {
  if (p == nullptr) return;
  Count(-static_cast<int64_t>(malloc_usable_size(p)));
  __libc_free(p);
}

void* calloc(size_t n, size_t size) {
  return Counted(__libc_calloc(n, size));
}

void* realloc(void* p, size_t size) {
  if (p == nullptr) return malloc(size);
  if (size == 0) {  // glibc frees and returns NULL
    free(p);
    return nullptr;
  }
  const size_t before = malloc_usable_size(p);
  void* q = __libc_realloc(p, size);
  if (q != nullptr) {
    Count(static_cast<int64_t>(malloc_usable_size(q)) - static_cast<int64_t>(before));
  }
  return q;
}

void* reallocarray(void* p, size_t n, size_t size) {
  size_t bytes;
  if (__builtin_mul_overflow(n, size, &bytes)) {
    errno = ENOMEM;
    return nullptr;
  }
  return realloc(p, bytes);
}

void* valloc(size_t size) {
  return Counted(__libc_valloc(size));
}

void* pvalloc(size_t size) {
  return Counted(__libc_pvalloc(size));
}

void* memalign(size_t alignment, size_t size) {
  static auto next = Next<void* (*)(size_t, size_t)>("memalign");
  return Counted(next(alignment, size));
}

void* aligned_alloc(size_t alignment, size_t size) {
  static auto next = Next<void* (*)(size_t, size_t)>("aligned_alloc");
  return Counted(next(alignment, size));
}

int posix_memalign(void** out, size_t alignment, size_t size) {
  static auto next = Next<int (*)(void**, size_t, size_t)>("posix_memalign");
  const int err = next(out, alignment, size);
  if (err == 0) Counted(*out);
  return err;
}

}  // extern "C"

namespace latch::used_memory {

bool Counted() {
  // Whether the wrappers are the allocator this process calls: valgrind's
  // memcheck, for one, replaces malloc in the executable too, and then
  // nothing is counted (the callers estimate instead). Told once, by an
  // allocation the compiler cannot see through.
  static const bool counted = [] {
    void* (*volatile allocate)(size_t) = malloc;
    const uint64_t before = Bytes();
    void* p = allocate(4096);
    const bool moved = Bytes() != before;
    free(p);
    return moved;
  }();
  return counted;
}

uint64_t Bytes() {
  int64_t sum = 0;
  for (const Slot& s : g_slots) sum += s.bytes.load(std::memory_order_relaxed);
  return sum > 0 ? static_cast<uint64_t>(sum) : 0;
}

}  // namespace latch::used_memory

#else  // a sanitizer's allocator: not counted

namespace latch::used_memory {

bool Counted() {
  return false;
}

uint64_t Bytes() {
  return 0;
}

}  // namespace latch::used_memory

#endif
