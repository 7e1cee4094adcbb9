//===- PyString.h - Python's str methods over UTF-8 -----------------------===//
//
// The str methods templates call (content.strip(), role.upper(),
// text.split('</think>')) and that jinja2's filters are built on (trim is
// str.strip, lower is str.lower, ...), on UTF-8 text with Python's
// code-point semantics: whitespace is Unicode whitespace, indices count
// code points.
//
//===----------------------------------------------------------------------===//
#ifndef COHERE2C_TEXT_CHAT_TEMPLATE_PYSTRING_H
#define COHERE2C_TEXT_CHAT_TEMPLATE_PYSTRING_H

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cohere2c::text::jinja::pystr {

std::string upper(std::string_view s);
std::string lower(std::string_view s);
/// str.title(): a cased character after an uncased one starts a word.
std::string title(std::string_view s);
/// str.capitalize(): the first character titlecased, the rest lowercased.
std::string capitalize(std::string_view s);

enum class Side { Both, Left, Right };
/// str.strip / lstrip / rstrip; `chars` nullopt strips whitespace.
std::string strip(std::string_view s, const std::optional<std::string> &chars,
                  Side side);

/// str.split / str.rsplit; `sep` nullopt splits at runs of whitespace.
/// maxsplit < 0 means no limit. Throws for an empty separator.
std::vector<std::string> split(std::string_view s,
                               const std::optional<std::string> &sep,
                               int64_t maxsplit, bool fromRight);

/// str.replace(old, new, count); count < 0 replaces all. An empty `old`
/// inserts `replacement` around every character, as Python does.
std::string replace(std::string_view s, std::string_view old,
                    std::string_view replacement, int64_t count);

/// str.find / str.rfind in code points; -1 when absent.
int64_t find(std::string_view s, std::string_view sub, bool fromRight);
/// str.count: non-overlapping occurrences.
int64_t count(std::string_view s, std::string_view sub);

/// str.center / ljust / rjust with a one-character fill ('<' left-aligns
/// the text, '>' right-aligns it, '^' centers it as Python does).
std::string justify(std::string_view s, int64_t width, std::string_view fill,
                    char align);

} // namespace cohere2c::text::jinja::pystr

#endif // COHERE2C_TEXT_CHAT_TEMPLATE_PYSTRING_H
