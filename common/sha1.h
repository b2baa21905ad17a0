// SHA1 as Redis uses it: the name of a script (EVALSHA) and the digest that
// password checks compare in constant time.
#pragma once

#include <string>
#include <string_view>

namespace latch {

// SHA1 of `data` as 40 lower-case hex digits.
std::string Sha1Hex(std::string_view data);

}  // namespace latch
