//===- Strings.h - Small string predicates --------------------------------===//
#ifndef COHERE2C_SUPPORT_STRINGS_H
#define COHERE2C_SUPPORT_STRINGS_H

#include <string_view>

namespace cohere2c {

/// Whether `text` is `suffix` preceded by at least one character (a tensor
/// named "_scale" alone scales nothing). std::string_view::ends_with is
/// C++20; the project builds as C++17.
inline bool endsWith(std::string_view text, std::string_view suffix) {
  return text.size() > suffix.size() &&
         text.substr(text.size() - suffix.size()) == suffix;
}

} // namespace cohere2c

#endif // COHERE2C_SUPPORT_STRINGS_H
