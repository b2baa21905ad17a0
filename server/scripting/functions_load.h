// One FUNCTION LOAD in progress: the functions the library's code
// registers with redis.register_function, collected before the library
// joins the others (all or nothing).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace latch::scripting {

class LibraryLoad {
 public:
  struct Registered {
    std::string name;
    std::optional<std::string> description;
    uint32_t flags = 0;
    int ref = 0;  // the callback, in the registry
  };

  // Adds a function. Returns nullptr, or Redis's error text (a bad name, a
  // name used twice in the library). Never throws.
  const char* Add(std::string_view name, std::optional<std::string_view> description,
                  uint32_t flags, int ref) noexcept;

  std::vector<Registered>& functions() { return functions_; }
  // Whether `name` is a valid library or function name: letters, digits
  // and underscores, at least one.
  static bool ValidName(std::string_view name);

  // FUNCTION LOAD's time limit on the library's own code (500 ms; none on
  // replay), from `start_us` on.
  int64_t start_us = 0;
  int64_t timeout_ms = 500;
  bool timed_out = false;

 private:
  std::vector<Registered> functions_;
};

}  // namespace latch::scripting
