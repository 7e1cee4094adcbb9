//===- ByteLevel.cpp - GPT-2's map between bytes and printable characters -===//
#include "text/tokenizer/ByteLevel.h"

#include "text/tokenizer/Utf8.h"

#include <array>

namespace cohere2c::text::byte_level {

namespace {

bool isPrintable(unsigned b) {
  return (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || b >= 0xAE;
}

struct Alphabet {
  std::array<std::string, 256> charOfByte;
  /// byteOfChar[cp] for the code points below 0x144 (the largest is
  /// U+0100 + 67); -1 for a code point that stands for no byte.
  std::array<int, 0x144> byteOfChar;

  Alphabet() {
    byteOfChar.fill(-1);
    char32_t next = 0x100;
    for (unsigned b = 0; b < 256; ++b) {
      char32_t cp = isPrintable(b) ? char32_t(b) : next++;
      utf8::append(cp, charOfByte[b]);
      byteOfChar[cp] = int(b);
    }
  }
};

const Alphabet &alphabet() {
  static const Alphabet table;
  return table;
}

} // namespace

std::string_view charOf(uint8_t b) { return alphabet().charOfByte[b]; }

std::string encode(std::string_view bytes) {
  const Alphabet &table = alphabet();
  std::string text;
  text.reserve(bytes.size() * 2);
  for (char c : bytes)
    text += table.charOfByte[uint8_t(c)];
  return text;
}

std::string decodeToken(std::string_view token) {
  const Alphabet &table = alphabet();
  std::string bytes;
  size_t pos = 0;
  while (pos < token.size()) {
    char32_t cp = utf8::decode(token, pos);
    if (cp >= table.byteOfChar.size() || table.byteOfChar[cp] < 0)
      return std::string(token);
    bytes += char(table.byteOfChar[cp]);
  }
  return bytes;
}

} // namespace cohere2c::text::byte_level
