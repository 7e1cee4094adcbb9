//===- Utf8.h - UTF-8 validation, lossy decoding, code points -------------===//
//
// UTF-8 as Rust's str sees it (the Unicode Standard's well-formed sequences:
// no overlongs, no surrogates, nothing above U+10FFFF), and Rust's
// String::from_utf8_lossy, which replaces each maximal invalid subpart (the
// longest prefix of a well-formed sequence, or one byte) by one U+FFFD.
//
//===----------------------------------------------------------------------===//
#ifndef COHERE2C_TEXT_TOKENIZER_UTF8_H
#define COHERE2C_TEXT_TOKENIZER_UTF8_H

#include <cstddef>
#include <string>
#include <string_view>

namespace cohere2c::text::utf8 {

inline constexpr size_t kValid = std::string_view::npos;

/// The byte offset of the first byte of `bytes` that does not begin a
/// well-formed UTF-8 sequence (or begins one cut off by the end), or kValid.
size_t findInvalid(std::string_view bytes);

/// Appends `bytes` to `out` as from_utf8_lossy decodes them. When
/// `complete` is false, `bytes` may continue later: a well-formed but
/// unfinished sequence at the end is left out. Returns how many bytes were
/// consumed (all of them when `complete`).
size_t appendLossy(std::string_view bytes, bool complete, std::string &out);

/// The code point that starts at `text[pos]` of valid UTF-8; `pos` moves past
/// it.
char32_t decode(std::string_view text, size_t &pos);
/// Where the code point that ends at `pos` (> 0) of valid UTF-8 starts.
size_t previousStart(std::string_view text, size_t pos);
/// Appends the UTF-8 of a code point.
void append(char32_t cp, std::string &out);

/// Unicode's White_Space property: Rust's char::is_whitespace and regex \s,
/// and Oniguruma's \s (which adds U+0085, already White_Space).
bool isWhiteSpace(char32_t cp);

} // namespace cohere2c::text::utf8

#endif // COHERE2C_TEXT_TOKENIZER_UTF8_H
