//===- Decoder.h - From ids back to text ----------------------------------===//
//
// tokenizers' decode (tokenizer/mod.rs, TokenizerImpl::decode): each id
// becomes its token, an added token's (normalized) content before the
// vocab's; with skip_special_tokens, a token whose text is the content of a
// special added token is dropped; then the decoder joins the tokens:
//   ByteLevel (pre_tokenizers/byte_level.rs) turns each token back into the
//             bytes it stands for (byte_level::decodeToken), added tokens
//             included, and decodes all bytes with from_utf8_lossy;
//   none (null) joins the tokens with ' '.
// The bytes of every id are computed once, at parse().
//
//===----------------------------------------------------------------------===//
#ifndef COHERE2C_TEXT_TOKENIZER_DECODER_H
#define COHERE2C_TEXT_TOKENIZER_DECODER_H

#include "text/tokenizer/AddedTokens.h"
#include "text/tokenizer/Bpe.h"
#include "text/tokenizer/Json.h"

#include <cstdint>
#include <string>
#include <vector>

namespace cohere2c::text {

class Decoder {
public:
  /// The decoder of tokenizer.json's /decoder, over the tokens of `model`
  /// and `added`. Throws TokenizerJsonError for a type other than ByteLevel.
  static Decoder parse(const JsonNode &node, const BpeModel &model,
                       const AddedVocabulary &added);

  /// Appends the bytes `id` adds to a decoded sequence. `started` says
  /// whether an earlier id added a token and becomes true when this one
  /// does. Error: an id that no token has (tokenizers skips those silently).
  Status append(int32_t id, bool skipSpecialTokens, bool &started,
                std::string &bytes) const;

  /// The largest id + 1.
  int64_t idLimit() const { return int64_t(kinds_.size()); }

private:
  enum class Kind : uint8_t { Unknown, Token, Special };
  bool byteLevel_ = false;
  std::vector<Kind> kinds_;
  /// The bytes of id i are bytes_[ends_[i-1], ends_[i]).
  std::string bytes_;
  std::vector<size_t> ends_;
};

} // namespace cohere2c::text

#endif // COHERE2C_TEXT_TOKENIZER_DECODER_H
