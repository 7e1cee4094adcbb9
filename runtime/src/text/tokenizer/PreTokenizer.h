//===- PreTokenizer.h - Splitting normalized text into words --------------===//
//
// tokenizers' pre-tokenizers, as a chain of splits ending in ByteLevel:
//   Digits  (pre_tokenizers/digits.rs) splits at characters that are
//           numeric (Rust's char::is_numeric: Nd, Nl, No), each on its own
//           with individual_digits, else runs of them;
//   Split   (split.rs) splits at the matches of a regex or a literal string,
//           with its delimiter behaviour and invert;
//   ByteLevel (byte_level.rs), last: prepends ' ' to each piece that does not
//           start with one (add_prefix_space), then splits each piece at the
//           GPT-2 regex (use_regex)
//             's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+|
//             ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
//           matched within the piece alone (lookahead stops at its end).
// Each stage works on each piece of the previous stage separately, and
// empty pieces are dropped. The BPE model then sees each word's bytes
// through the byte-level alphabet, so ByteLevel must come last (a stage
// after it would see that alphabet, not the text).
//
// Immutable after parse(); split() is safe from many threads.
//
//===----------------------------------------------------------------------===//
#ifndef COHERE2C_TEXT_TOKENIZER_PRETOKENIZER_H
#define COHERE2C_TEXT_TOKENIZER_PRETOKENIZER_H

#include "text/tokenizer/Json.h"
#include "text/tokenizer/Regex.h"

#include <deque>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace cohere2c::text {

/// The words of one text: views of the text, or of copies of its pieces
/// that got a prefix space.
class Words {
public:
  void clear() {
    words_.clear();
    prefixed_.clear();
  }
  size_t size() const { return words_.size(); }
  std::string_view operator[](size_t i) const { return words_[i]; }

private:
  friend class PreTokenizer;
  std::vector<std::string_view> words_;
  /// A deque, so the views of earlier pieces stay valid.
  std::deque<std::string> prefixed_;
};

class PreTokenizer {
public:
  /// The pre-tokenizer of tokenizer.json's /pre_tokenizer: ByteLevel, or a
  /// Sequence of Digits and Split stages ending in ByteLevel. Throws
  /// TokenizerJsonError for another type ("unsupported pre-tokenizer
  /// 'Metaspace'"), a ByteLevel missing or not last, a bad Split regex.
  static std::unique_ptr<PreTokenizer> parse(const JsonNode &node);
  ~PreTokenizer();

  /// Appends the words of `text` (valid UTF-8). Error: a regex match that
  /// PCRE2 gave up on.
  Status split(std::string_view text, Words &words) const;

  struct Stage;

private:
  PreTokenizer();
  std::vector<std::unique_ptr<Stage>> stages_;
  bool addPrefixSpace_ = false;
  /// The GPT-2 regex, or null without use_regex.
  std::unique_ptr<Regex> wordRegex_;
};

} // namespace cohere2c::text

#endif // COHERE2C_TEXT_TOKENIZER_PRETOKENIZER_H
