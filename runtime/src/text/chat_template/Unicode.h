//===- Unicode.h - Python's str semantics over UTF-8 bytes ----------------===//
//
// Template values keep strings as UTF-8, but Python counts, indexes, slices,
// strips and case-maps code points. These helpers give the code-point view
// and the character classes of Python's str methods (3.11), from utf8proc's
// Unicode tables.
//
// Bytes that are not valid UTF-8 decode to U+DC80..U+DCFF and encode back to
// the same byte (Python's "surrogateescape"), so every string round-trips.
//
//===----------------------------------------------------------------------===//
#ifndef COHERE2C_TEXT_CHAT_TEMPLATE_UNICODE_H
#define COHERE2C_TEXT_CHAT_TEMPLATE_UNICODE_H

#include <string>
#include <string_view>
#include <vector>

namespace cohere2c::text::jinja {

std::u32string decodeUtf8(std::string_view text);
std::string encodeUtf8(std::u32string_view codePoints);
void appendUtf8(std::string &out, char32_t codePoint);

/// The number of code points in `text` (Python's len()).
size_t codePointCount(std::string_view text);

/// str.isspace() of one character: Unicode White_Space as Python defines it.
bool isSpace(char32_t c);
/// str.isprintable() of one character: not in categories Cc, Cf, Cs, Co, Cn,
/// Zl, Zp, and not a Zs other than ' '. Decides repr()'s escapes.
bool isPrintable(char32_t c);
/// `\w` of Python's re module: letters, digits, numbers and '_'.
bool isWordChar(char32_t c);
bool isAlpha(char32_t c);
/// str.isdigit(): here the decimal digits (category Nd).
bool isDigit(char32_t c);
bool isNumeric(char32_t c);
/// Cased letters (Lu, Ll, Lt): what str.title() and str.islower() look at.
bool isCased(char32_t c);
bool isUpperCase(char32_t c);
bool isLowerCase(char32_t c);
/// A character that may start or continue an identifier (jinja2's names).
bool isIdentifierStart(char32_t c);
bool isIdentifierContinue(char32_t c);

/// str.upper() / str.lower(): utf8proc's simple case mappings plus the
/// special cases that change length ('ß' -> "SS", 'İ' -> "i̇").
std::u32string toUpper(std::u32string_view text);
std::u32string toLower(std::u32string_view text);
/// The titlecase of one character (str.capitalize, str.title).
std::u32string toTitle(char32_t c);

/// str.splitlines() without the line ends: splits at \n, \r, \r\n, \v, \f,
/// \x1c-\x1e, \x85, U+2028 and U+2029.
std::vector<std::u32string> splitLines(std::u32string_view text);

} // namespace cohere2c::text::jinja

#endif // COHERE2C_TEXT_CHAT_TEMPLATE_UNICODE_H
