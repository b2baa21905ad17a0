#include "server/types/intset.h"

#include <malloc.h>

#include <cstdlib>
#include <cstring>
#include <new>

namespace latch {

IntSet::~IntSet() {
  std::free(data_);
}

IntSet::IntSet(const IntSet& other) : len_(other.len_), width_(other.width_) {
  if (len_ == 0) return;
  const size_t bytes = size_t{len_} * width_;
  data_ = static_cast<unsigned char*>(std::malloc(bytes));
  if (data_ == nullptr) throw std::bad_alloc();
  std::memcpy(data_, other.data_, bytes);
}

int IntSet::WidthOf(int64_t v) {
  if (v < INT32_MIN || v > INT32_MAX) return 8;
  if (v < INT16_MIN || v > INT16_MAX) return 4;
  return 2;
}

int64_t IntSet::Get(size_t i, int width) const {
  const unsigned char* p = data_ + i * static_cast<size_t>(width);
  if (width == 8) {
    int64_t v;
    std::memcpy(&v, p, 8);
    return v;
  }
  if (width == 4) {
    int32_t v;
    std::memcpy(&v, p, 4);
    return v;
  }
  int16_t v;
  std::memcpy(&v, p, 2);
  return v;
}

void IntSet::Put(size_t i, int64_t v) {
  unsigned char* p = data_ + i * width_;
  if (width_ == 8) {
    std::memcpy(p, &v, 8);
  } else if (width_ == 4) {
    const auto w = static_cast<int32_t>(v);
    std::memcpy(p, &w, 4);
  } else {
    const auto w = static_cast<int16_t>(v);
    std::memcpy(p, &w, 2);
  }
}

bool IntSet::Search(int64_t v, size_t* pos) const {
  if (len_ == 0) {
    *pos = 0;
    return false;
  }
  // Past either end: no search needed (appending ascending ids is common).
  if (v > At(len_ - 1)) {
    *pos = len_;
    return false;
  }
  if (v < At(0)) {
    *pos = 0;
    return false;
  }
  size_t lo = 0, hi = len_;
  while (lo < hi) {
    const size_t mid = lo + (hi - lo) / 2;
    const int64_t cur = At(mid);
    if (cur == v) {
      *pos = mid;
      return true;
    }
    if (cur < v) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  *pos = lo;
  return false;
}

bool IntSet::Contains(int64_t v) const {
  if (WidthOf(v) > width_) return false;
  size_t pos;
  return Search(v, &pos);
}

void IntSet::Resize(size_t n) {
  const size_t bytes = n * width_;
  if (bytes == 0) {
    std::free(data_);
    data_ = nullptr;
    return;
  }
  void* p = std::realloc(data_, bytes);
  if (p == nullptr) throw std::bad_alloc();
  data_ = static_cast<unsigned char*>(p);
}

bool IntSet::Add(int64_t v) {
  const int need = WidthOf(v);
  if (need > width_) {
    // Wider than every element: it is the new smallest or largest. Widen in
    // place from the back so nothing is overwritten before it is read.
    const int old = width_;
    const size_t n = len_;
    width_ = static_cast<uint8_t>(need);
    try {
      Resize(n + 1);
    } catch (const std::bad_alloc&) {
      width_ = static_cast<uint8_t>(old);
      throw;
    }
    const bool prepend = v < 0;
    for (size_t i = n; i-- > 0;) Put(i + (prepend ? 1 : 0), Get(i, old));
    Put(prepend ? 0 : n, v);
    ++len_;
    return true;
  }
  size_t pos;
  if (Search(v, &pos)) return false;
  Resize(size_t{len_} + 1);
  std::memmove(data_ + (pos + 1) * width_, data_ + pos * width_, (len_ - pos) * width_);
  Put(pos, v);
  ++len_;
  return true;
}

bool IntSet::Remove(int64_t v) {
  if (WidthOf(v) > width_) return false;
  size_t pos;
  if (!Search(v, &pos)) return false;
  std::memmove(data_ + pos * width_, data_ + (pos + 1) * width_, (len_ - pos - 1) * width_);
  --len_;
  // Shrinking never fails to keep the contents (realloc keeps the block
  // when it cannot move it).
  if (len_ == 0) {
    std::free(data_);
    data_ = nullptr;
  } else if (void* p = std::realloc(data_, size_t{len_} * width_)) {
    data_ = static_cast<unsigned char*>(p);
  }
  return true;
}

void IntSet::Clear() {
  std::free(data_);
  data_ = nullptr;
  len_ = 0;
  width_ = 2;
}

size_t IntSet::memory() const {
  return data_ != nullptr ? malloc_usable_size(data_) : 0;
}

void IntSet::WriteImage(std::string& out) const {
  out.push_back(static_cast<char>(width_));
  if (len_ > 0) out.append(reinterpret_cast<const char*>(data_), size_t{len_} * width_);
}

namespace {

// The width and length an intset image states; false if it is not one.
bool ReadImage(std::string_view image, int* width, size_t* len) {
  if (image.empty()) return false;
  *width = static_cast<unsigned char>(image[0]);
  if (*width != 2 && *width != 4 && *width != 8) return false;
  if ((image.size() - 1) % static_cast<size_t>(*width) != 0) return false;
  *len = (image.size() - 1) / static_cast<size_t>(*width);
  return true;
}

}  // namespace

bool IntSet::Assign(std::string_view image) {
  int width;
  size_t len;
  if (!ReadImage(image, &width, &len)) return false;
  Clear();
  width_ = static_cast<uint8_t>(width);
  if (len > 0) {
    Resize(len);
    std::memcpy(data_, image.data() + 1, len * static_cast<size_t>(width));
  }
  len_ = static_cast<uint32_t>(len);
  return true;
}

void IntSet::Borrow(std::string_view image) {
  int width = 2;
  size_t len = 0;
  ReadImage(image, &width, &len);  // (an entry's image: always one)
  data_ = len > 0 ? reinterpret_cast<unsigned char*>(const_cast<char*>(image.data() + 1)) : nullptr;
  len_ = static_cast<uint32_t>(len);
  width_ = static_cast<uint8_t>(width);
}

}  // namespace latch
