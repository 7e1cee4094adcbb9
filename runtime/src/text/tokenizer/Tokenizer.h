//===- Tokenizer.h - Hugging Face tokenizer.json, byte-level BPE ----------===//
//
// Reads a Hugging Face `tokenizer.json` and reproduces the ids of the
// `tokenizers` library's encode(text, add_special_tokens) and the text of its
// decode(ids, skip_special_tokens), for the pipeline Cohere's models use:
//   added tokens   matched in the raw text before anything else (honouring
//                  special, normalized, lstrip, rstrip, single_word);
//   normalizer     NFC (or none);
//   pre-tokenizer  Sequence of Digits (individual_digits), Split and
//                  ByteLevel (the GPT-2 regex with \p{L} and \p{N},
//                  add_prefix_space, use_regex), ByteLevel last;
//   model          byte-level BPE: vocab and merges ("a b" or ["a", "b"]);
//   post-processor TemplateProcessing (the BOS), ByteLevel or none;
//   decoder        ByteLevel or none.
// A feature it does not implement is an error naming its JSON path
// ("tokenizer.json: /pre_tokenizer/pretokenizers/0/type: unsupported
// pre-tokenizer 'Metaspace'"), never silently different ids.
//
// Immutable after parse() (but for a bounded cache of the ids of words seen,
// shared under locks); safe to use from many threads at once.
//
//===----------------------------------------------------------------------===//
#ifndef COHERE2C_TEXT_TOKENIZER_TOKENIZER_H
#define COHERE2C_TEXT_TOKENIZER_TOKENIZER_H

#include "Support/Status.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cohere2c::text {

class Tokenizer {
public:
  /// `json` is the text of a tokenizer.json; `source` names it in errors.
  /// Errors: JSON that does not parse (with the byte offset), a missing or
  /// mistyped field, an unsupported feature, a merge naming a token that is
  /// not in the vocab, all naming `source` and the JSON path.
  static StatusOr<std::shared_ptr<const Tokenizer>>
  parse(std::string_view json, const std::string &source);
  ~Tokenizer();

  /// tokenizers' encode(text, add_special_tokens).ids. `text` must be valid
  /// UTF-8 (an error names the byte offset of the first invalid byte).
  StatusOr<std::vector<int32_t>> encode(std::string_view text,
                                        bool addSpecialTokens) const;

  /// tokenizers' decode(ids, skip_special_tokens): bytes that are not valid
  /// UTF-8 become U+FFFD as in Rust's from_utf8_lossy. Error: an id outside
  /// the vocabulary (naming it).
  StatusOr<std::string> decode(const std::vector<int32_t> &ids,
                               bool skipSpecialTokens) const;

  /// The id of a token of the vocab or of the added tokens, by its content.
  std::optional<int32_t> tokenToId(std::string_view token) const;
  /// Largest id + 1 (the vocab and the added tokens).
  int64_t vocabSize() const;
  /// Whether `id` is an added token marked special.
  bool isSpecial(int32_t id) const;

  struct Impl;

private:
  explicit Tokenizer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
  friend class IncrementalDecoder;
};

/// Decodes one sequence's ids as they are generated, for streaming. The
/// texts push() returns, joined with finish()'s, equal decode() of all the
/// ids pushed; none ends in the middle of a UTF-8 character (bytes of an
/// unfinished character wait for the next ids). Not thread-safe; one per
/// sequence.
class IncrementalDecoder {
public:
  /// `tokenizer` must outlive this decoder.
  IncrementalDecoder(const Tokenizer &tokenizer, bool skipSpecialTokens);
  /// The text that `id` completes (possibly empty). Error: an unknown id,
  /// which changes nothing.
  StatusOr<std::string> push(int32_t id);
  /// What is held back at the end: an unfinished character, as U+FFFD.
  /// The decoder is then ready for a new sequence.
  std::string finish();

private:
  const Tokenizer::Impl *impl_;
  bool skipSpecialTokens_;
  /// Whether a token was pushed since the start (tokens are joined by ' '
  /// when the tokenizer has no decoder).
  bool started_ = false;
  /// Bytes of an unfinished UTF-8 character.
  std::string pending_;
};

} // namespace cohere2c::text

#endif // COHERE2C_TEXT_TOKENIZER_TOKENIZER_H
