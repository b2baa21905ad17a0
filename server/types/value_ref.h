// Reading and changing a collection however its keyspace entry holds it:
// boxed (the entry points to its Object) or packed in the entry (the entry's
// value bytes are its image; keyspace.h).
//
//  - ValueRef<T> is what a command reads through: the boxed Object itself,
//    or a view of T over the entry's image (no copy). Like an entry pointer,
//    it is stale after the next write to its key: a command reads, decides,
//    then writes, and looks the key up again if it reads after.
//  - Changing<T> is what an applier writes through: the boxed Object
//    itself, or a copy loaded from the image. Commit() stores the result the
//    way it now fits: packed when small and compact (the new image, in place
//    when as long as the old), boxed when not, no key when empty.
//
// Lists are always boxed (a quicklist's nodes are separate buffers): a
// command reads their Object, and their appliers change it in place.
#pragma once

#include <concepts>
#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

#include "server/keyspace.h"
#include "server/types/hash.h"
#include "server/types/set.h"
#include "server/types/zset.h"

namespace latch {

// A collection class that can live in its entry as an image.
template <typename T>
concept PackableValue = requires(T& t, const T& c, std::string_view s, std::string& out) {
  { c.Packable() } -> std::same_as<bool>;
  c.WriteImage(out);
  { t.LoadImage(s) } -> std::same_as<bool>;
  t.BorrowImage(s);
  t.ReturnImage();
};

template <PackableValue T>
class ValueRef {
 public:
  ValueRef() = default;
  explicit ValueRef(const Keyspace::Entry* e) { Reset(e); }
  ~ValueRef() { Release(); }
  ValueRef(const ValueRef&) = delete;
  ValueRef& operator=(const ValueRef&) = delete;

  // Refers to the value of `e` (a T: the caller checked its type), or to
  // nothing when e is null.
  void Reset(const Keyspace::Entry* e) {
    Release();
    ptr_ = nullptr;
    if (e == nullptr) return;
    if (e->packed_in_entry()) {
      view_.BorrowImage(e->image());
      borrowed_ = true;
      ptr_ = &view_;
      return;
    }
    ptr_ = static_cast<const T*>(e->object());
  }

  const T* get() const { return ptr_; }
  const T* operator->() const { return ptr_; }
  const T& operator*() const { return *ptr_; }
  explicit operator bool() const { return ptr_ != nullptr; }
  bool operator==(std::nullptr_t) const { return ptr_ == nullptr; }

 private:
  void Release() {
    if (!borrowed_) return;
    view_.ReturnImage();  // the bytes are the entry's, not the view's
    borrowed_ = false;
  }

  const T* ptr_ = nullptr;
  // The view while the value is packed: an empty value otherwise (which
  // allocates nothing).
  T view_;
  bool borrowed_ = false;
};

// Calls f(const Object&) with the collection `e` holds (not a string), a
// view when it is packed: for what every type answers alike (OBJECT
// ENCODING, a rewrite's records, a replay check's comparison). Not memory():
// a view owns no allocation (the entry's is counted by Keyspace::AllocationOf).
template <typename F>
decltype(auto) WithObject(const Keyspace::Entry& e, F&& f) {
  switch (e.type()) {
    case ValueType::kHash: {
      ValueRef<HashValue> v(&e);
      return f(static_cast<const Object&>(*v));
    }
    case ValueType::kSet: {
      ValueRef<SetValue> v(&e);
      return f(static_cast<const Object&>(*v));
    }
    case ValueType::kZSet: {
      ValueRef<ZSetValue> v(&e);
      return f(static_cast<const Object&>(*v));
    }
    default:
      return f(*e.object());
  }
}

template <PackableValue T>
class Changing {
 public:
  // The value under `key`: none when absent (found() false), and error()
  // set when the key holds another type (only a damaged log can ask that
  // of an applier).
  Changing(Keyspace& ks, std::string_view key) : ks_(ks), key_(key) {
    const Keyspace::Entry* e = ks.Peek(key);
    if (e == nullptr) return;
    if (e->type() != T::kType) {
      other_type_ = true;
      other_ = e->type();
      return;
    }
    existed_ = true;
    if (e->packed_in_entry()) {
      owned_ = std::make_unique<T>();
      if (!owned_->LoadImage(e->image())) {
        owned_.reset();
        damaged_ = true;
        return;
      }
      value_ = owned_.get();
    } else {
      value_ = static_cast<T*>(Keyspace::MutableObject(*e));
    }
  }
  Changing(const Changing&) = delete;
  Changing& operator=(const Changing&) = delete;

  bool found() const { return value_ != nullptr; }
  // Why the key cannot be changed as a T: "" when it can (or is absent).
  std::string error(std::string_view what) const {
    if (other_type_)
      return std::string(what) + " of a key that holds a " + std::string(TypeName(other_));
    if (damaged_) return std::string(what) + " of a key whose packed value is damaged";
    return {};
  }
  bool ok() const { return !other_type_ && !damaged_; }

  // The key was absent: it gets `fresh` (stored by Commit).
  void Create(std::unique_ptr<T> fresh) {
    owned_ = std::move(fresh);
    value_ = owned_.get();
  }

  T* operator->() const { return value_; }
  T& operator*() const { return *value_; }

  // Stores the changed value under the key, keeping its deadline: no key
  // when empty, packed in the entry when it fits, else boxed.
  void Commit() {
    if (value_ == nullptr) return;
    if (value_->size() == 0) {
      if (existed_) ks_.Erase(key_);
      return;
    }
    if (value_->Packable()) {
      thread_local std::string image;
      image.clear();
      value_->WriteImage(image);
      ks_.SetImage(key_, T::kType, image, kNoDeadline, /*keep_deadline=*/true);
      return;
    }
    if (owned_) ks_.SetObject(key_, std::move(owned_), kNoDeadline, /*keep_deadline=*/true);
    // (else: the boxed Object was changed where it is)
  }

 private:
  Keyspace& ks_;
  std::string_view key_;
  T* value_ = nullptr;
  std::unique_ptr<T> owned_;
  bool existed_ = false;
  bool other_type_ = false;
  bool damaged_ = false;
  ValueType other_ = ValueType::kString;
};

}  // namespace latch
