#include "log/written_mark.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>

#include "common/unique_fd.h"

namespace latch::aof {

// The file's bytes. `seq` is odd while Reset() rewrites the id (a reader
// that finds it odd knows the process died half-way); `size` is stored
// alone, as one aligned 8-byte store.
struct WrittenMark::Layout {
  char magic[16];
  uint64_t seq;
  uint64_t size;
  uint32_t id_len;
  uint32_t reserved;
  char id[64];
};

namespace {

constexpr char kMagic[16] = "latch-written-1";
constexpr size_t kFileSize = 4096;

}  // namespace

WrittenMark::~WrittenMark() {
  if (mark_ != nullptr) ::munmap(mark_, kFileSize);
}

std::optional<std::string> WrittenMark::Open(const std::string& path) {
  UniqueFd fd(::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644));
  if (!fd) return "Can't open " + path + ": " + std::strerror(errno);
  if (::ftruncate(fd.get(), kFileSize) != 0) {
    return "Can't size " + path + ": " + std::strerror(errno);
  }
  void* p = ::mmap(nullptr, kFileSize, PROT_READ | PROT_WRITE, MAP_SHARED, fd.get(), 0);
  if (p == MAP_FAILED) return "Can't map " + path + ": " + std::strerror(errno);
  // (The mapping outlives the descriptor.)
  mark_ = static_cast<Layout*>(p);
  return std::nullopt;
}

void WrittenMark::Reset(std::string_view log_id, uint64_t size) {
  if (mark_ == nullptr) return;
  std::atomic_ref<uint64_t> seq(mark_->seq);
  const uint64_t s = seq.load(std::memory_order_relaxed);
  seq.store(s | 1, std::memory_order_release);  // odd: being rewritten
  std::atomic_thread_fence(std::memory_order_release);
  std::memcpy(mark_->magic, kMagic, sizeof(kMagic));
  const size_t n = std::min(log_id.size(), sizeof(mark_->id));
  std::memset(mark_->id, 0, sizeof(mark_->id));
  std::memcpy(mark_->id, log_id.data(), n);
  mark_->id_len = static_cast<uint32_t>(n);
  std::atomic_ref<uint64_t>(mark_->size).store(size, std::memory_order_relaxed);
  std::atomic_thread_fence(std::memory_order_release);
  seq.store((s | 1) + 1, std::memory_order_release);  // even again
}

void WrittenMark::Advance(uint64_t size) {
  if (mark_ == nullptr) return;
  std::atomic_ref<uint64_t>(mark_->size).store(size, std::memory_order_release);
}

std::optional<WrittenMark::Seen> WrittenMark::Read(const std::string& path) {
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd) return std::nullopt;
  Layout l{};
  if (::pread(fd.get(), &l, sizeof(l), 0) != static_cast<ssize_t>(sizeof(l))) return std::nullopt;
  if (std::memcmp(l.magic, kMagic, sizeof(kMagic)) != 0) return std::nullopt;
  if ((l.seq & 1) != 0 || l.id_len > sizeof(l.id)) return std::nullopt;
  Seen s;
  s.log_id.assign(l.id, l.id_len);
  s.size = l.size;
  return s;
}

}  // namespace latch::aof
