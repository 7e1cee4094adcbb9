//===- Utf8.cpp - UTF-8 validation, lossy decoding, code points -----------===//
//
// The well-formed byte sequences are table 3-7 of the Unicode Standard
// (chapter 3.9); Rust's core::str validation follows the same table.
//
//===----------------------------------------------------------------------===//
#include "text/tokenizer/Utf8.h"

#include <cstdint>
#include <cstring>

namespace cohere2c::text::utf8 {

namespace {

/// What starts at one position of a byte string.
struct Sequence {
  enum Kind { Valid, Invalid, Unfinished } kind;
  /// Valid: the sequence's length; Invalid: the length of the maximal
  /// invalid subpart; Unfinished: the bytes present.
  size_t length;
};

/// The length of a well-formed sequence that starts with `lead`; 0 when no
/// well-formed sequence starts with it.
size_t sequenceLength(uint8_t lead) {
  if (lead < 0x80)
    return 1;
  if (lead >= 0xC2 && lead <= 0xDF)
    return 2;
  if (lead >= 0xE0 && lead <= 0xEF)
    return 3;
  if (lead >= 0xF0 && lead <= 0xF4)
    return 4;
  return 0;
}

/// Whether `b` may follow `lead` as its second byte; the later bytes are
/// always 80..BF. The narrow ranges exclude overlongs (E0, F0), surrogates
/// (ED) and code points above U+10FFFF (F4).
bool isSecondByte(uint8_t lead, uint8_t b) {
  switch (lead) {
  case 0xE0:
    return b >= 0xA0 && b <= 0xBF;
  case 0xED:
    return b >= 0x80 && b <= 0x9F;
  case 0xF0:
    return b >= 0x90 && b <= 0xBF;
  case 0xF4:
    return b >= 0x80 && b <= 0x8F;
  default:
    return b >= 0x80 && b <= 0xBF;
  }
}

Sequence sequenceAt(std::string_view bytes, size_t pos) {
  uint8_t lead = uint8_t(bytes[pos]);
  size_t length = sequenceLength(lead);
  if (length == 0)
    return {Sequence::Invalid, 1};
  for (size_t k = 1; k < length; ++k) {
    if (pos + k == bytes.size())
      return {Sequence::Unfinished, k};
    uint8_t b = uint8_t(bytes[pos + k]);
    bool ok = k == 1 ? isSecondByte(lead, b) : (b >= 0x80 && b <= 0xBF);
    if (!ok)
      return {Sequence::Invalid, k};
  }
  return {Sequence::Valid, length};
}

constexpr std::string_view kReplacement = "\xEF\xBF\xBD"; // U+FFFD

} // namespace

size_t findInvalid(std::string_view bytes) {
  size_t pos = 0;
  while (pos < bytes.size()) {
    // Eight ASCII bytes at a time: the common case.
    if (pos + 8 <= bytes.size()) {
      uint64_t chunk;
      std::memcpy(&chunk, bytes.data() + pos, 8);
      if ((chunk & 0x8080808080808080ull) == 0) {
        pos += 8;
        continue;
      }
    }
    if (uint8_t(bytes[pos]) < 0x80) {
      ++pos;
      continue;
    }
    Sequence seq = sequenceAt(bytes, pos);
    if (seq.kind != Sequence::Valid)
      return pos;
    pos += seq.length;
  }
  return kValid;
}

size_t appendLossy(std::string_view bytes, bool complete, std::string &out) {
  size_t pos = 0;
  while (pos < bytes.size()) {
    size_t start = pos;
    while (pos < bytes.size() && uint8_t(bytes[pos]) < 0x80)
      ++pos;
    Sequence seq{Sequence::Valid, 0};
    while (pos < bytes.size() &&
           (seq = sequenceAt(bytes, pos)).kind == Sequence::Valid)
      pos += seq.length;
    out.append(bytes.substr(start, pos - start));
    if (pos == bytes.size())
      break;
    // An unfinished sequence at the end is one maximal subpart once nothing
    // can follow it (from_utf8_lossy's error_len() == None).
    if (seq.kind == Sequence::Unfinished && !complete)
      return pos;
    out.append(kReplacement);
    pos += seq.length;
  }
  return bytes.size();
}

char32_t decode(std::string_view text, size_t &pos) {
  uint8_t lead = uint8_t(text[pos]);
  size_t length = sequenceLength(lead);
  static constexpr uint8_t kLeadMask[5] = {0, 0x7F, 0x1F, 0x0F, 0x07};
  char32_t cp = lead & kLeadMask[length];
  for (size_t k = 1; k < length; ++k)
    cp = (cp << 6) | (uint8_t(text[pos + k]) & 0x3F);
  pos += length;
  return cp;
}

size_t previousStart(std::string_view text, size_t pos) {
  do
    --pos;
  while (pos > 0 && (uint8_t(text[pos]) & 0xC0) == 0x80);
  return pos;
}

void append(char32_t cp, std::string &out) {
  if (cp < 0x80) {
    out += char(cp);
  } else if (cp < 0x800) {
    out += char(0xC0 | (cp >> 6));
    out += char(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += char(0xE0 | (cp >> 12));
    out += char(0x80 | ((cp >> 6) & 0x3F));
    out += char(0x80 | (cp & 0x3F));
  } else {
    out += char(0xF0 | (cp >> 18));
    out += char(0x80 | ((cp >> 12) & 0x3F));
    out += char(0x80 | ((cp >> 6) & 0x3F));
    out += char(0x80 | (cp & 0x3F));
  }
}

bool isWhiteSpace(char32_t cp) {
  if (cp <= 0x20)
    return cp == 0x20 || (cp >= 0x09 && cp <= 0x0D);
  if (cp < 0x85)
    return false;
  return cp == 0x85 || cp == 0xA0 || cp == 0x1680 ||
         (cp >= 0x2000 && cp <= 0x200A) || cp == 0x2028 || cp == 0x2029 ||
         cp == 0x202F || cp == 0x205F || cp == 0x3000;
}

} // namespace cohere2c::text::utf8
