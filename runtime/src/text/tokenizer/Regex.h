//===- Regex.h - Oniguruma-compatible regular expressions over PCRE2 ------===//
//
// tokenizers runs its pre-tokenizer regexes with Oniguruma (the `onig`
// feature, utils/onig.rs). PCRE2 (8-bit, UTF + UCP, JIT where available) is a
// backtracking engine with the same leftmost-first alternation, so the
// matches agree once the patterns mean the same: Oniguruma's \s is
// Unicode's White_Space, while PCRE2's also takes U+180E, so compile()
// rewrites \s and \S (translateOnigurumaPattern). Unicode property tables
// follow the PCRE2 build (Unicode 14 for 10.42).
//
// Thread-safe: matching uses per-thread match data.
//
//===----------------------------------------------------------------------===//
#ifndef COHERE2C_TEXT_TOKENIZER_REGEX_H
#define COHERE2C_TEXT_TOKENIZER_REGEX_H

#include "Support/Status.h"

#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

struct pcre2_real_code_8;

namespace cohere2c::text {

/// `pattern` with Oniguruma's \s and \S spelled as PCRE2 classes. An error
/// for what PCRE2 reads differently and this does not translate: \h \H (hex
/// digits in Oniguruma), \v \V \R \X \K \N, and \S inside a class.
StatusOr<std::string> translateOnigurumaPattern(std::string_view pattern);

class Regex {
public:
  /// Compiles a PCRE2 pattern (UTF, UCP). Error: PCRE2's message and offset.
  static StatusOr<std::unique_ptr<Regex>> compile(const std::string &pattern);
  ~Regex();

  /// Appends to `matches` the [begin, end) byte ranges of the successive
  /// non-overlapping matches in valid UTF-8 `subject`, as the onig crate's
  /// find_iter: leftmost-first; an empty match right where the previous match
  /// ended is skipped. Error: PCRE2 gave up (resource limits).
  Status findAll(std::string_view subject,
                 std::vector<std::pair<size_t, size_t>> &matches) const;

private:
  explicit Regex(pcre2_real_code_8 *code, bool jit) : code_(code), jit_(jit) {}
  pcre2_real_code_8 *code_;
  bool jit_;
};

} // namespace cohere2c::text

#endif // COHERE2C_TEXT_TOKENIZER_REGEX_H
