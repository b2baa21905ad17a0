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

#include <malloc.h>
#include <strings.h>

#include <cerrno>
#include <new>

// The allocator underneath: jemalloc (Debian's libjemalloc2, the allocator
// Debian's redis-server runs on), through its non-standard entry points —
// its malloc and free are the names interposed here. Why jemalloc rather
// than glibc's malloc: no 8-byte header per chunk and finer size classes
// (8, 16, 32, 48, 64, 80, 96, 112, 128…, where glibc rounds every chunk to
// 16 bytes past an 8-byte header): a key, a small collection and its packed
// buffer are three allocations, and glibc's rounding was a quarter of a
// small set's bytes. It is also the allocator Redis's figures come from, so
// memory per element compares like with like.
extern "C" {
void* mallocx(size_t size, int flags);
void* rallocx(void* p, size_t size, int flags);
size_t sallocx(const void* p, int flags);
void dallocx(void* p, int flags);
int mallctl(const char* name, void* oldp, size_t* oldlenp, void* newp, size_t newlen);
}

// jemalloc's settings, read when it starts (MALLOC_CONF in the environment
// still overrides them). retain:false: address space jemalloc no longer
// uses is unmapped, as glibc's malloc does with its large chunks, instead
// of being kept for reuse — under an address-space limit (RLIMIT_AS,
// `ulimit -v`) a retained range counts against the limit, and a large
// value could then be refused while most of the memory is free.
extern "C" {
__attribute__((used)) const char* malloc_conf = "retain:false";
}

namespace {

// jemalloc's flags (jemalloc_macros.h).
constexpr int kZero = 0x40;
inline int AlignFlag(size_t alignment) {
  return ffsl(static_cast<long>(alignment)) - 1;  // MALLOCX_ALIGN: lg(alignment)
}

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

// mallocx() wants a size of at least 1 (malloc(0) returns a unique pointer).
inline void* Allocate(size_t size, int flags) {
  void* p = mallocx(size == 0 ? 1 : size, flags);
  if (p == nullptr) {
    errno = ENOMEM;
    return nullptr;
  }
  Count(static_cast<int64_t>(sallocx(p, 0)));
  return p;
}

}  // namespace

extern "C" {

void* malloc(size_t size) {
  return Allocate(size, 0);
}

void free(void* p) {
  if (p == nullptr) return;
  Count(-static_cast<int64_t>(sallocx(p, 0)));
  dallocx(p, 0);
}

size_t malloc_usable_size(void* p) {
  return p != nullptr ? sallocx(p, 0) : 0;
}

void* calloc(size_t n, size_t size) {
  size_t bytes;
  if (__builtin_mul_overflow(n, size, &bytes)) {
    errno = ENOMEM;
    return nullptr;
  }
  return Allocate(bytes, kZero);
}

void* realloc(void* p, size_t size) {
  if (p == nullptr) return malloc(size);
  if (size == 0) {  // as glibc: frees and returns NULL
    free(p);
    return nullptr;
  }
  const size_t before = sallocx(p, 0);
  void* q = rallocx(p, size, 0);
  if (q == nullptr) {
    errno = ENOMEM;
    return nullptr;
  }
  Count(static_cast<int64_t>(sallocx(q, 0)) - static_cast<int64_t>(before));
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

void* memalign(size_t alignment, size_t size) {
  if (alignment == 0 || (alignment & (alignment - 1)) != 0) {
    errno = EINVAL;
    return nullptr;
  }
  return Allocate(size, AlignFlag(alignment));
}

void* aligned_alloc(size_t alignment, size_t size) {
  return memalign(alignment, size);
}

void* valloc(size_t size) {
  return memalign(4096, size);
}

void* pvalloc(size_t size) {
  // (At least one page, as glibc's.)
  return memalign(4096, size == 0 ? 4096 : (size + 4095) & ~size_t{4095});
}

int posix_memalign(void** out, size_t alignment, size_t size) {
  if (alignment < sizeof(void*) || (alignment & (alignment - 1)) != 0) return EINVAL;
  void* p = Allocate(size, AlignFlag(alignment));
  if (p == nullptr) return ENOMEM;
  *out = p;
  return 0;
}

}  // extern "C"

// C++'s allocation functions, here rather than libstdc++'s or jemalloc's
// own (libjemalloc exports operator new too, and whichever library came
// first would win): every allocation goes through the counted functions
// above.
void* operator new(size_t size) {
  void* p = malloc(size);
  if (p == nullptr) throw std::bad_alloc();
  return p;
}
void* operator new[](size_t size) {
  return operator new(size);
}
void* operator new(size_t size, const std::nothrow_t&) noexcept {
  return malloc(size);
}
void* operator new[](size_t size, const std::nothrow_t&) noexcept {
  return malloc(size);
}
void* operator new(size_t size, std::align_val_t a) {
  void* p = memalign(static_cast<size_t>(a), size);
  if (p == nullptr) throw std::bad_alloc();
  return p;
}
void* operator new[](size_t size, std::align_val_t a) {
  return operator new(size, a);
}
void* operator new(size_t size, std::align_val_t a, const std::nothrow_t&) noexcept {
  return memalign(static_cast<size_t>(a), size);
}
void* operator new[](size_t size, std::align_val_t a, const std::nothrow_t&) noexcept {
  return memalign(static_cast<size_t>(a), size);
}
void operator delete(void* p) noexcept {
  free(p);
}
void operator delete[](void* p) noexcept {
  free(p);
}
void operator delete(void* p, size_t) noexcept {
  free(p);
}
void operator delete[](void* p, size_t) noexcept {
  free(p);
}
void operator delete(void* p, const std::nothrow_t&) noexcept {
  free(p);
}
void operator delete[](void* p, const std::nothrow_t&) noexcept {
  free(p);
}
void operator delete(void* p, std::align_val_t) noexcept {
  free(p);
}
void operator delete[](void* p, std::align_val_t) noexcept {
  free(p);
}
void operator delete(void* p, size_t, std::align_val_t) noexcept {
  free(p);
}
void operator delete[](void* p, size_t, std::align_val_t) noexcept {
  free(p);
}
void operator delete(void* p, std::align_val_t, const std::nothrow_t&) noexcept {
  free(p);
}
void operator delete[](void* p, std::align_val_t, const std::nothrow_t&) noexcept {
  free(p);
}

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

std::string Allocator() {
  // "5.3.0-0-g54eaed1…": the release, as Redis names its jemalloc.
  const char* version = nullptr;
  size_t len = sizeof(version);
  if (mallctl("version", &version, &len, nullptr, 0) != 0 || version == nullptr) return "jemalloc";
  std::string v(version);
  return "jemalloc-" + v.substr(0, v.find('-'));
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

std::string Allocator() {
  return "libc";
}

}  // namespace latch::used_memory

#endif
