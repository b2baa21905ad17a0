#include "server/types/packed.h"

#include <cstring>

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
  return std::string_view(buf_.data() + data, len);
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
  const size_t head = VarintSize(value.size());
  const size_t front = head + value.size();
  const size_t total = front + VarintSize(front);
  buf_.insert(pos, total, '\0');
  char* out = buf_.data() + pos;
  PutVarint(out, value.size());
  if (!value.empty()) std::memcpy(out + head, value.data(), value.size());
  PutBackVarint(out + front, front);
  ++count_;
  return pos;
}

size_t PackedList::Replace(size_t pos, std::string_view value) {
  const size_t old_total = Next(pos) - pos;
  const size_t head = VarintSize(value.size());
  const size_t front = head + value.size();
  const size_t total = front + VarintSize(front);
  buf_.replace(pos, old_total, total, '\0');
  char* out = buf_.data() + pos;
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
  buf_.erase(pos, stop - pos);
  count_ -= removed;
  return pos;
}

}  // namespace latch
