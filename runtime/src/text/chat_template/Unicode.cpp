//===- Unicode.cpp - Python's str semantics over UTF-8 bytes --------------===//
#include "text/chat_template/Unicode.h"

#include "text/chat_template/SpecialCasing.h"

#include <utf8proc.h>

#include <algorithm>
#include <iterator>

namespace cohere2c::text::jinja {

namespace {

constexpr char32_t kEscapeBase = 0xDC00;

utf8proc_category_t category(char32_t c) {
  return utf8proc_category(static_cast<utf8proc_int32_t>(c));
}

/// Decodes one sequence at text[i]; returns its length (1 for a byte that
/// does not start a valid sequence, which decodes to U+DC00 + byte).
size_t decodeOne(std::string_view text, size_t i, char32_t &out) {
  auto byte = [&](size_t k) { return static_cast<unsigned char>(text[k]); };
  unsigned char b0 = byte(i);
  if (b0 < 0x80) {
    out = b0;
    return 1;
  }
  size_t length = b0 >= 0xF0 ? 4 : b0 >= 0xE0 ? 3 : b0 >= 0xC0 ? 2 : 0;
  if (length == 0 || b0 > 0xF4 || i + length > text.size()) {
    out = kEscapeBase + b0;
    return 1;
  }
  char32_t cp = b0 & (0x7F >> length);
  for (size_t k = 1; k < length; ++k) {
    if ((byte(i + k) & 0xC0) != 0x80) {
      out = kEscapeBase + b0;
      return 1;
    }
    cp = (cp << 6) | (byte(i + k) & 0x3F);
  }
  static constexpr char32_t kMinimum[] = {0, 0, 0x80, 0x800, 0x10000};
  if (cp < kMinimum[length] || cp > 0x10FFFF ||
      (cp >= 0xD800 && cp <= 0xDFFF)) {
    out = kEscapeBase + b0;
    return 1;
  }
  out = cp;
  return length;
}

} // namespace

std::u32string decodeUtf8(std::string_view text) {
  std::u32string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    char32_t c;
    i += decodeOne(text, i, c);
    out.push_back(c);
  }
  return out;
}

void appendUtf8(std::string &out, char32_t c) {
  if (c >= kEscapeBase + 0x80 && c <= kEscapeBase + 0xFF) {
    out.push_back(static_cast<char>(c - kEscapeBase));
  } else if (c < 0x80) {
    out.push_back(static_cast<char>(c));
  } else if (c < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (c >> 6)));
    out.push_back(static_cast<char>(0x80 | (c & 0x3F)));
  } else if (c < 0x10000) {
    out.push_back(static_cast<char>(0xE0 | (c >> 12)));
    out.push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (c & 0x3F)));
  } else {
    out.push_back(static_cast<char>(0xF0 | (c >> 18)));
    out.push_back(static_cast<char>(0x80 | ((c >> 12) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (c & 0x3F)));
  }
}

std::string encodeUtf8(std::u32string_view codePoints) {
  std::string out;
  out.reserve(codePoints.size());
  for (char32_t c : codePoints)
    appendUtf8(out, c);
  return out;
}

size_t codePointCount(std::string_view text) {
  size_t count = 0;
  for (size_t i = 0; i < text.size(); ++count) {
    char32_t c;
    i += decodeOne(text, i, c);
  }
  return count;
}

bool isSpace(char32_t c) {
  switch (c) {
  case 0x09:
  case 0x0A:
  case 0x0B:
  case 0x0C:
  case 0x0D:
  case 0x1C:
  case 0x1D:
  case 0x1E:
  case 0x1F:
  case 0x20:
  case 0x85:
  case 0xA0:
  case 0x1680:
  case 0x2028:
  case 0x2029:
  case 0x202F:
  case 0x205F:
  case 0x3000:
    return true;
  default:
    return c >= 0x2000 && c <= 0x200A;
  }
}

bool isPrintable(char32_t c) {
  if (c == ' ')
    return true;
  switch (category(c)) {
  case UTF8PROC_CATEGORY_CC:
  case UTF8PROC_CATEGORY_CF:
  case UTF8PROC_CATEGORY_CS:
  case UTF8PROC_CATEGORY_CO:
  case UTF8PROC_CATEGORY_CN:
  case UTF8PROC_CATEGORY_ZL:
  case UTF8PROC_CATEGORY_ZP:
  case UTF8PROC_CATEGORY_ZS:
    return false;
  default:
    return true;
  }
}

bool isAlpha(char32_t c) {
  utf8proc_category_t k = category(c);
  return k >= UTF8PROC_CATEGORY_LU && k <= UTF8PROC_CATEGORY_LO;
}

bool isDigit(char32_t c) { return category(c) == UTF8PROC_CATEGORY_ND; }

bool isNumeric(char32_t c) {
  utf8proc_category_t k = category(c);
  return k >= UTF8PROC_CATEGORY_ND && k <= UTF8PROC_CATEGORY_NO;
}

bool isWordChar(char32_t c) { return c == '_' || isAlpha(c) || isNumeric(c); }

bool isCased(char32_t c) {
  utf8proc_category_t k = category(c);
  return k >= UTF8PROC_CATEGORY_LU && k <= UTF8PROC_CATEGORY_LT;
}

bool isUpperCase(char32_t c) { return category(c) == UTF8PROC_CATEGORY_LU; }
bool isLowerCase(char32_t c) { return category(c) == UTF8PROC_CATEGORY_LL; }

bool isIdentifierStart(char32_t c) {
  return c == '_' || isAlpha(c) || category(c) == UTF8PROC_CATEGORY_NL;
}

bool isIdentifierContinue(char32_t c) {
  utf8proc_category_t k = category(c);
  return isIdentifierStart(c) || k == UTF8PROC_CATEGORY_MN ||
         k == UTF8PROC_CATEGORY_MC || k == UTF8PROC_CATEGORY_ND ||
         k == UTF8PROC_CATEGORY_PC;
}

namespace {

const SpecialCase *findSpecialCase(char32_t c) {
  const SpecialCase *begin = std::begin(kSpecialCases);
  const SpecialCase *end = std::end(kSpecialCases);
  const SpecialCase *it = std::lower_bound(
      begin, end, c, [](const SpecialCase &entry, char32_t key) {
        return entry.codePoint < key;
      });
  return it != end && it->codePoint == c ? it : nullptr;
}

/// Maps each character through SpecialCasing, else utf8proc's `simple`.
template <typename Simple>
std::u32string mapCase(std::u32string_view text,
                       const char32_t *SpecialCase::*field, Simple simple) {
  std::u32string out;
  out.reserve(text.size());
  for (char32_t c : text) {
    if (const SpecialCase *special = findSpecialCase(c))
      out += special->*field;
    else
      out.push_back(
          static_cast<char32_t>(simple(static_cast<utf8proc_int32_t>(c))));
  }
  return out;
}

} // namespace

std::u32string toUpper(std::u32string_view text) {
  return mapCase(text, &SpecialCase::upper, utf8proc_toupper);
}

std::u32string toLower(std::u32string_view text) {
  return mapCase(text, &SpecialCase::lower, utf8proc_tolower);
}

std::u32string toTitle(char32_t c) {
  return mapCase(std::u32string_view(&c, 1), &SpecialCase::title,
                 utf8proc_totitle);
}

std::vector<std::u32string> splitLines(std::u32string_view text) {
  std::vector<std::u32string> lines;
  size_t start = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    char32_t c = text[i];
    bool lineEnd = c == '\n' || c == '\r' || c == 0x0B || c == 0x0C ||
                   (c >= 0x1C && c <= 0x1E) || c == 0x85 || c == 0x2028 ||
                   c == 0x2029;
    if (!lineEnd)
      continue;
    lines.emplace_back(text.substr(start, i - start));
    if (c == '\r' && i + 1 < text.size() && text[i + 1] == '\n')
      ++i;
    start = i + 1;
  }
  if (start < text.size())
    lines.emplace_back(text.substr(start));
  return lines;
}

} // namespace cohere2c::text::jinja
