//===- AddedTokens.h - tokenizer.json's added tokens ----------------------===//
//
// tokenizers' AddedVocabulary (tokenizer/added_vocabulary.rs). Added tokens
// are found in the text before the model sees it, in two passes:
//   1. tokens with normalized=false in the raw text;
//   2. tokens with normalized=true in each remaining piece once normalized,
//      matching their own normalized content.
// In each pass the matches are leftmost-longest and non-overlapping (the
// daachorse automaton tokenizers builds). A match of a single_word token
// is dropped unless no word character (Rust regex \w) touches it; lstrip
// and rstrip widen a match over the whitespace (White_Space) on its left
// (not past the previous match) and on its right.
//
// Ids are assigned as tokenizers' add_tokens does when it loads the file:
// the vocab's id for content the vocab has, else the next id from the vocab
// size on; the "id" written in the file must agree.
//
// Immutable after parse(); split() is safe from many threads.
//
//===----------------------------------------------------------------------===//
#ifndef COHERE2C_TEXT_TOKENIZER_ADDEDTOKENS_H
#define COHERE2C_TEXT_TOKENIZER_ADDEDTOKENS_H

#include "text/tokenizer/Bpe.h"
#include "text/tokenizer/Json.h"
#include "text/tokenizer/Normalizer.h"
#include "text/tokenizer/Regex.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace cohere2c::text {

struct AddedToken {
  std::string content;
  /// What the token matches and decodes as: `content`, normalized when the
  /// token is (tokenizers' normalized_cache).
  std::string pattern;
  int32_t id;
  bool special, normalized, lstrip, rstrip, singleWord;
};

/// A piece of text between added tokens (id < 0) or the text an added token
/// matched, whitespace it strips included.
struct Segment {
  std::string_view text;
  int32_t id;
};

class AddedVocabulary {
public:
  /// The tokens of tokenizer.json's /added_tokens. Throws TokenizerJsonError:
  /// a missing or mistyped field, content given twice, an id other than the
  /// one tokenizers assigns or one a different vocab token has.
  static std::unique_ptr<AddedVocabulary> parse(const JsonNode &node,
                                                const BpeModel &model,
                                                const Normalizer &normalizer);
  ~AddedVocabulary();

  /// Appends the segments of `text`: pass 1 (normalized tokens false) or
  /// pass 2 (true). Empty segments are left out.
  void split(std::string_view text, bool normalizedTokens,
             std::vector<Segment> &out) const;

  std::optional<int32_t> tokenToId(const std::string &content) const;
  /// The added token with this id, or nullptr.
  const AddedToken *byId(int32_t id) const;
  /// Whether `token` is the content of a special added token (what
  /// tokenizers' decode tests to skip a token).
  bool isSpecialContent(const std::string &token) const;
  /// The largest id + 1, 0 without added tokens.
  int64_t idLimit() const;

  class Matcher;

private:
  AddedVocabulary();
  void addToken(const JsonNode &entry, const BpeModel &model,
                const Normalizer &normalizer, int32_t &nextId);
  /// Keeps or drops a match and widens it, as tokenizers' find_matches.
  bool acceptMatch(std::string_view text, const AddedToken &token,
                   size_t previousEnd, size_t &begin, size_t &end) const;

  std::vector<AddedToken> tokens_;
  std::unordered_map<std::string, size_t> byContent_;
  std::unordered_map<int32_t, size_t> byId_;
  std::unique_ptr<Matcher> rawMatcher_, normalizedMatcher_;
  /// Rust regex's \w, compiled when a token is single_word.
  std::unique_ptr<Regex> wordChar_;
};

} // namespace cohere2c::text

#endif // COHERE2C_TEXT_TOKENIZER_ADDEDTOKENS_H
