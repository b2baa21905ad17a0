// RAII ownership of a libuv handle.
//
// libuv closes handles asynchronously: memory may only be freed in the close
// callback. UvHandle allocates the handle, and on destruction starts uv_close
// with a callback that frees it, so every handle has exactly one owner and is
// freed exactly once. The loop must run again (the server does so at
// shutdown) for pending close callbacks to fire.
#pragma once

#include <uv.h>

#include <utility>

namespace latch {

template <typename T>
class UvHandle {
 public:
  UvHandle() : h_(new T{}) {}
  ~UvHandle() { Close(); }
  UvHandle(UvHandle&& o) noexcept
      : h_(std::exchange(o.h_, nullptr)), initialized_(o.initialized_) {}
  UvHandle& operator=(UvHandle&& o) noexcept {
    if (this != &o) {
      Close();
      h_ = std::exchange(o.h_, nullptr);
      initialized_ = o.initialized_;
    }
    return *this;
  }
  UvHandle(const UvHandle&) = delete;
  UvHandle& operator=(const UvHandle&) = delete;

  T* get() const { return h_; }
  T* operator->() const { return h_; }
  uv_handle_t* handle() const { return reinterpret_cast<uv_handle_t*>(h_); }

  // Records that uv_<type>_init succeeded, so closing must go through uv_close.
  void MarkInitialized() { initialized_ = true; }
  bool initialized() const { return h_ != nullptr && initialized_; }

  void Close() {
    if (h_ == nullptr) return;
    if (initialized_) {
      uv_close(handle(), [](uv_handle_t* h) { delete reinterpret_cast<T*>(h); });
    } else {
      delete h_;
    }
    h_ = nullptr;
  }

 private:
  T* h_;
  bool initialized_ = false;
};

}  // namespace latch
