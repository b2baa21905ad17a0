#include "server/types/packed.h"

#include <malloc.h>

#include <cstring>
#include <new>

namespace latch {

namespace {

size_t VarintSize(size_t v) {
  size_t n = 1;
  while (v >= 0x80) {
    v >>= 7;
    ++n;
  }
  return n;
}

// Writes `v` as LEB128 at `out` (VarintSize(v) bytes).
void PutVarint(char* out, size_t v) {
  while (v >= 0x80) {
    *out++ = static_cast<char>((v & 0x7f) | 0x80);
    v >>= 7;
  }
  *out = static_cast<char>(v);
}

// Writes `v` as LEB128 backwards: its first byte at out[n-1], its last at
// out[0], so a reader starting at the end of an element meets it first.
void PutBackVarint(char* out, size_t v) {
  const size_t n = VarintSize(v);
  char tmp[10];
  PutVarint(tmp, v);
  for (size_t i = 0; i < n; ++i) out[n - 1 - i] = tmp[i];
}

}  // namespace

PackedList::PackedList(const PackedList& other) {
  *this = other;
}

PackedList& PackedList::operator=(const PackedList& other) {
  if (this == &other) return *this;
  Clear();
  if (other.size_ > 0) {
    Reserve(other.size_);
    std::memcpy(buf_, other.buf_, other.size_);
  }
  size_ = other.size_;
  count_ = other.count_;
  return *this;
}

void PackedList::WriteImage(std::string& out) const {
  const uint32_t count = count_;
  out.append(reinterpret_cast<const char*>(&count), sizeof(count));
  if (size_ > 0) out.append(buf_, size_);
}

bool PackedList::Assign(std::string_view image) {
  if (image.size() < sizeof(uint32_t)) return false;
  uint32_t count;
  std::memcpy(&count, image.data(), sizeof(count));
  image.remove_prefix(sizeof(count));
  Clear();
  if (!image.empty()) {
    Reserve(image.size());
    std::memcpy(buf_, image.data(), image.size());
  }
  size_ = static_cast<uint32_t>(image.size());
  count_ = count;
  return true;
}

void PackedList::Borrow(std::string_view image) {
  uint32_t count = 0;
  if (image.size() >= sizeof(count)) {
    std::memcpy(&count, image.data(), sizeof(count));
    image.remove_prefix(sizeof(count));
  }
  buf_ = image.empty() ? nullptr : const_cast<char*>(image.data());
  size_ = static_cast<uint32_t>(image.size());
  count_ = count;
}

PackedList& PackedList::operator=(PackedList&& other) noexcept {
  if (this == &other) return *this;
  std::free(buf_);
  buf_ = std::exchange(other.buf_, nullptr);
  size_ = std::exchange(other.size_, 0);
  count_ = std::exchange(other.count_, 0);
  return *this;
}

size_t PackedList::capacity() const {
  return buf_ != nullptr ? malloc_usable_size(buf_) : 0;
}

void PackedList::Reserve(size_t extra) {
  const size_t need = size_ + extra;
  // (32-bit sizes, packed.h: checked before the capacity, which a grown
  // buffer can have past 4 GB.)
  if (need > UINT32_MAX) throw std::bad_alloc();
  if (need <= capacity()) return;
  const size_t want = need < 1024 ? need : need + need / 4;
  void* p = std::realloc(buf_, want);
  if (p == nullptr) throw std::bad_alloc();
  buf_ = static_cast<char*>(p);
}

void PackedList::Shrink() {
  if (size_ == 0) {
    Clear();
    return;
  }
  if (void* p = std::realloc(buf_, size_)) buf_ = static_cast<char*>(p);
}

char* PackedList::Open(size_t pos, size_t n) {
  Reserve(n);
  std::memmove(buf_ + pos + n, buf_ + pos, size_ - pos);
  size_ += n;
  return buf_ + pos;
}

void PackedList::Close(size_t pos, size_t n) {
  std::memmove(buf_ + pos, buf_ + pos + n, size_ - pos - n);
  size_ -= n;
}

size_t PackedList::EncodedSize(size_t len) {
  const size_t front = VarintSize(len) + len;
  return front + VarintSize(front);
}

void PackedList::Header(size_t pos, size_t* data, size_t* len) const {
  size_t v = 0;
  int shift = 0;
  size_t i = pos;
  for (;;) {
    const auto byte = static_cast<unsigned char>(buf_[i++]);
    v |= static_cast<size_t>(byte & 0x7f) << shift;
    if ((byte & 0x80) == 0) break;
    shift += 7;
  }
  *data = i;
  *len = v;
}

std::string_view PackedList::At(size_t pos) const {
  size_t data, len;
  Header(pos, &data, &len);
  return std::string_view(buf_ + data, len);
}

size_t PackedList::Next(size_t pos) const {
  size_t data, len;
  Header(pos, &data, &len);
  const size_t front = data - pos + len;
  return pos + front + VarintSize(front);
}

size_t PackedList::Prev(size_t pos) const {
  if (pos == 0) return end();
  // The back varint ends right before `pos`; its bytes, read from there
  // toward the front, are the LEB128 of the element's front size.
  size_t v = 0;
  int shift = 0;
  size_t i = pos;
  for (;;) {
    const auto byte = static_cast<unsigned char>(buf_[--i]);
    v |= static_cast<size_t>(byte & 0x7f) << shift;
    if ((byte & 0x80) == 0) break;
    shift += 7;
  }
  return i - v;
}

size_t PackedList::Seek(int64_t index) const {
  const auto n = static_cast<int64_t>(count_);
  if (index < 0) index += n;
  if (index < 0 || index >= n) return end();
  if (index <= n / 2) {
    size_t pos = begin();
    for (int64_t i = 0; i < index; ++i) pos = Next(pos);
    return pos;
  }
  size_t pos = end();
  for (int64_t i = n; i > index; --i) pos = Prev(pos);
  return pos;
}

size_t PackedList::Find(std::string_view value, size_t from, size_t stride) const {
  for (size_t pos = from; pos < end();) {
    if (At(pos) == value) return pos;
    for (size_t k = 0; k < stride && pos < end(); ++k) pos = Next(pos);
  }
  return end();
}

size_t PackedList::Insert(size_t pos, std::string_view value) {
  if (Aliases(value)) return Insert(pos, std::string(value));
  const size_t head = VarintSize(value.size());
  const size_t front = head + value.size();
  const size_t total = front + VarintSize(front);
  char* out = Open(pos, total);
  PutVarint(out, value.size());
  if (!value.empty()) std::memcpy(out + head, value.data(), value.size());
  PutBackVarint(out + front, front);
  ++count_;
  return pos;
}

size_t PackedList::Replace(size_t pos, std::string_view value) {
  if (Aliases(value)) return Replace(pos, std::string(value));
  const size_t old_total = Next(pos) - pos;
  const size_t head = VarintSize(value.size());
  const size_t front = head + value.size();
  const size_t total = front + VarintSize(front);
  if (total > old_total) {
    Open(pos + old_total, total - old_total);
  } else if (total < old_total) {
    Close(pos + total, old_total - total);
  }
  char* out = buf_ + pos;
  PutVarint(out, value.size());
  if (!value.empty()) std::memcpy(out + head, value.data(), value.size());
  PutBackVarint(out + front, front);
  return pos;
}

size_t PackedList::Erase(size_t pos, size_t n) {
  size_t stop = pos;
  size_t removed = 0;
  while (removed < n && stop < end()) {
    stop = Next(stop);
    ++removed;
  }
  Close(pos, stop - pos);
  count_ -= removed;
  return pos;
}

}  // namespace latch
