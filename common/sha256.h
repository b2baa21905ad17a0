// SHA-256 (FIPS 180-4), for ACL passwords: Redis stores and shows a user's
// passwords as the SHA-256 of the cleartext in 64 lower-case hex digits.
#pragma once

#include <string>
#include <string_view>

namespace latch {

// SHA-256 of `data` as 64 lower-case hex digits.
std::string Sha256Hex(std::string_view data);

}  // namespace latch
