// SHA1 (FIPS 180-4), small and dependency-free. Redis names scripts by the
// SHA1 of their text, and AUTH compares password digests; neither needs
// speed, so this is the textbook algorithm, one 64-byte block at a time.
#include "common/sha1.h"

#include <cstdint>
#include <cstring>

namespace latch {

std::string Sha1Hex(std::string_view data) {
  uint32_t h[5] = {0x67452301u, 0xEFCDAB89u, 0x98BADCFEu, 0x10325476u, 0xC3D2E1F0u};
  auto rotl = [](uint32_t x, int n) { return (x << n) | (x >> (32 - n)); };
  auto block = [&](const unsigned char* p) {
    uint32_t w[80];
    for (int i = 0; i < 16; ++i) {
      w[i] = (uint32_t{p[4 * i]} << 24) | (uint32_t{p[4 * i + 1]} << 16) |
             (uint32_t{p[4 * i + 2]} << 8) | uint32_t{p[4 * i + 3]};
    }
    for (int i = 16; i < 80; ++i) w[i] = rotl(w[i - 3] ^ w[i - 8] ^ w[i - 14] ^ w[i - 16], 1);
    uint32_t a = h[0], b = h[1], c = h[2], d = h[3], e = h[4];
    for (int i = 0; i < 80; ++i) {
      uint32_t f, k;
      if (i < 20) {
        f = (b & c) | (~b & d);
        k = 0x5A827999u;
      } else if (i < 40) {
        f = b ^ c ^ d;
        k = 0x6ED9EBA1u;
      } else if (i < 60) {
        f = (b & c) | (b & d) | (c & d);
        k = 0x8F1BBCDCu;
      } else {
        f = b ^ c ^ d;
        k = 0xCA62C1D6u;
      }
      uint32_t t = rotl(a, 5) + f + e + k + w[i];
      e = d;
      d = c;
      c = rotl(b, 30);
      b = a;
      a = t;
    }
    h[0] += a;
    h[1] += b;
    h[2] += c;
    h[3] += d;
    h[4] += e;
  };
  const auto* bytes = reinterpret_cast<const unsigned char*>(data.data());
  size_t full = data.size() / 64;
  for (size_t i = 0; i < full; ++i) block(bytes + 64 * i);
  // The tail: the remaining bytes, 0x80, zeros, and the length in bits.
  unsigned char tail[128] = {};
  size_t rem = data.size() % 64;
  if (rem > 0) std::memcpy(tail, bytes + 64 * full, rem);
  tail[rem] = 0x80;
  size_t tail_len = rem + 1 + 8 <= 64 ? 64 : 128;
  uint64_t bits = static_cast<uint64_t>(data.size()) * 8;
  for (int i = 0; i < 8; ++i) tail[tail_len - 1 - i] = static_cast<unsigned char>(bits >> (8 * i));
  block(tail);
  if (tail_len == 128) block(tail + 64);
  static const char kHex[] = "0123456789abcdef";
  std::string out(40, '0');
  for (int i = 0; i < 20; ++i) {
    auto byte = static_cast<unsigned char>(h[i / 4] >> (24 - 8 * (i % 4)));
    out[2 * i] = kHex[byte >> 4];
    out[2 * i + 1] = kHex[byte & 15];
  }
  return out;
}

}  // namespace latch
