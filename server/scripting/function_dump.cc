// FUNCTION DUMP's payload, byte for byte as Redis 7.0 writes it (so a
// payload moves between Redis and latch):
//
//   for each library:  0xF5 (RDB_OPCODE_FUNCTION2), then its code as an RDB
//                      string: length-prefixed, LZF-compressed when longer
//                      than 20 bytes and compression gains (rdbcompression
//                      yes, Redis's default)
//   then:              the RDB version (10), two bytes little-endian
//                      the CRC-64 (Jones) of everything before, 8 bytes LE
//
// RESTORE reads the same, and also the older RDB_OPCODE_FUNCTION (0xF6:
// name, engine, description, code) Redis 7.0's first releases wrote.
#include <liblzf/lzf.h>

#include <cstring>

#include "server/scripting/engine.h"

namespace latch::scripting {

namespace {

constexpr unsigned char kOpFunction = 246;   // RDB_OPCODE_FUNCTION (7.0 RC)
constexpr unsigned char kOpFunction2 = 245;  // RDB_OPCODE_FUNCTION2
constexpr uint16_t kRdbVersion = 10;

// CRC-64/Jones, reflected (Redis's crc64.c): polynomial 0xad93d23594c935a9.
uint64_t Crc64(std::string_view data) {
  static const auto table = [] {
    struct T {
      uint64_t v[256];
    } t{};
    const uint64_t poly = 0x95ac9329ac4bc9b5ULL;  // the reflected polynomial
    for (int i = 0; i < 256; ++i) {
      uint64_t crc = static_cast<uint64_t>(i);
      for (int j = 0; j < 8; ++j) crc = (crc & 1) ? (crc >> 1) ^ poly : crc >> 1;
      t.v[i] = crc;
    }
    return t;
  }();
  uint64_t crc = 0;
  for (unsigned char c : data) crc = table.v[(crc ^ c) & 0xff] ^ (crc >> 8);
  return crc;
}

void SaveLen(std::string& out, uint64_t len) {
  if (len < (1 << 6)) {
    out.push_back(static_cast<char>(len & 0xff));
  } else if (len < (1 << 14)) {
    out.push_back(static_cast<char>(((len >> 8) & 0xff) | 0x40));
    out.push_back(static_cast<char>(len & 0xff));
  } else if (len <= UINT32_MAX) {
    out.push_back(static_cast<char>(0x80));
    for (int s = 24; s >= 0; s -= 8) out.push_back(static_cast<char>((len >> s) & 0xff));
  } else {
    out.push_back(static_cast<char>(0x81));
    for (int s = 56; s >= 0; s -= 8) out.push_back(static_cast<char>((len >> s) & 0xff));
  }
}

void SaveString(std::string& out, std::string_view s) {
  if (s.size() > 20) {
    // rdbSaveLzfStringObject: worth it only when it saves at least 4 bytes.
    size_t outlen = s.size() - 4;
    std::string comp(outlen + 1, '\0');
    unsigned int n = lzf_compress(s.data(), static_cast<unsigned>(s.size()), comp.data(),
                                  static_cast<unsigned>(outlen));
    if (n > 0) {
      out.push_back(static_cast<char>(0xC3));  // RDB_ENCVAL << 6 | RDB_ENC_LZF
      SaveLen(out, n);
      SaveLen(out, s.size());
      out.append(comp.data(), n);
      return;
    }
  }
  SaveLen(out, s.size());
  out.append(s);
}

class PayloadReader {
 public:
  explicit PayloadReader(std::string_view data) : d_(data) {}
  bool Byte(unsigned char* b) {
    if (pos_ >= d_.size()) return false;
    *b = static_cast<unsigned char>(d_[pos_++]);
    return true;
  }
  // rdbLoadLen; *encoded for the special encodings (0xC0…).
  bool Len(uint64_t* len, bool* encoded) {
    unsigned char b;
    if (!Byte(&b)) return false;
    *encoded = false;
    int type = (b & 0xC0) >> 6;
    if (type == 3) {
      *encoded = true;
      *len = b & 0x3F;
      return true;
    }
    if (type == 0) {
      *len = b & 0x3F;
      return true;
    }
    if (type == 1) {
      unsigned char b2;
      if (!Byte(&b2)) return false;
      *len = (static_cast<uint64_t>(b & 0x3F) << 8) | b2;
      return true;
    }
    int bytes = b == 0x80 ? 4 : b == 0x81 ? 8 : 0;
    if (bytes == 0) return false;
    uint64_t v = 0;
    for (int i = 0; i < bytes; ++i) {
      unsigned char x;
      if (!Byte(&x)) return false;
      v = (v << 8) | x;
    }
    *len = v;
    return true;
  }
  bool String(std::string* out) {
    uint64_t len;
    bool encoded;
    if (!Len(&len, &encoded)) return false;
    if (!encoded) {
      if (len > d_.size() - pos_) return false;
      out->assign(d_.substr(pos_, len));
      pos_ += len;
      return true;
    }
    if (len <= 2) {
      // An integer stored as 1, 2 or 4 bytes, little-endian.
      int bytes = 1 << len;
      int64_t v = 0;
      for (int i = 0; i < bytes; ++i) {
        unsigned char x;
        if (!Byte(&x)) return false;
        v |= static_cast<int64_t>(x) << (8 * i);
      }
      if (bytes == 1) v = static_cast<int8_t>(v);
      if (bytes == 2) v = static_cast<int16_t>(v);
      if (bytes == 4) v = static_cast<int32_t>(v);
      *out = std::to_string(v);
      return true;
    }
    if (len != 3) return false;
    uint64_t clen, ulen;
    if (!Len(&clen, &encoded) || encoded || !Len(&ulen, &encoded) || encoded) return false;
    if (clen > d_.size() - pos_ || ulen > (512u << 20)) return false;
    out->assign(ulen, '\0');
    if (ulen > 0 && lzf_decompress(d_.data() + pos_, static_cast<unsigned>(clen), out->data(),
                                   static_cast<unsigned>(ulen)) != ulen) {
      return false;
    }
    pos_ += clen;
    return true;
  }
  size_t remaining() const { return d_.size() - pos_; }

 private:
  std::string_view d_;
  size_t pos_ = 0;
};

}  // namespace

std::string Engine::Dump() const {
  std::string out;
  for (const auto& [name, lib] : libraries_) {
    out.push_back(static_cast<char>(kOpFunction2));
    SaveString(out, lib.code);
  }
  out.push_back(static_cast<char>(kRdbVersion & 0xff));
  out.push_back(static_cast<char>(kRdbVersion >> 8));
  uint64_t crc = Crc64(out);
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>((crc >> (8 * i)) & 0xff));
  return out;
}

std::optional<std::vector<std::string>> Engine::ParseDump(std::string_view payload,
                                                          std::string* error) {
  // verifyDumpPayload: the footer's version and checksum.
  if (payload.size() < 10) {
    *error = "ERR DUMP payload version or checksum are wrong";
    return std::nullopt;
  }
  const auto* footer = reinterpret_cast<const unsigned char*>(payload.data() + payload.size() - 10);
  uint16_t version = static_cast<uint16_t>(footer[0] | (footer[1] << 8));
  uint64_t crc = 0;
  for (int i = 0; i < 8; ++i) crc |= static_cast<uint64_t>(footer[2 + i]) << (8 * i);
  if (version > kRdbVersion || Crc64(payload.substr(0, payload.size() - 8)) != crc) {
    *error = "ERR DUMP payload version or checksum are wrong";
    return std::nullopt;
  }
  PayloadReader r(payload.substr(0, payload.size() - 10));
  std::vector<std::string> codes;
  while (r.remaining() > 0) {
    unsigned char type;
    if (!r.Byte(&type)) {
      *error = "ERR can not read data type";
      return std::nullopt;
    }
    if (type != kOpFunction && type != kOpFunction2) {
      *error = "ERR given type is not a function";
      return std::nullopt;
    }
    std::string code;
    if (type == kOpFunction) {
      // name, engine, description (a flag and a string), then the code.
      std::string name, engine, desc;
      unsigned char has_desc = 0;
      if (!r.String(&name) || !r.String(&engine) || !r.Byte(&has_desc) ||
          (has_desc != 0 && !r.String(&desc)) || !r.String(&code)) {
        *error = "ERR failed loading the given functions payload";
        return std::nullopt;
      }
    } else if (!r.String(&code)) {
      *error = "ERR Failed loading library payload";
      return std::nullopt;
    }
    codes.push_back(std::move(code));
  }
  return codes;
}

}  // namespace latch::scripting
