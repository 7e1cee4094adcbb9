//===- Normalizer.h - tokenizer.json's normalizer: NFC --------------------===//
//
// tokenizers normalizes each piece of text left between added tokens
// (normalizers/unicode.rs, NFC with the unicode-normalization crate); here
// utf8proc composes (Unicode 15 for utf8proc 2.8). Supported: "NFC", null,
// and a "Sequence" of those.
//
//===----------------------------------------------------------------------===//
#ifndef COHERE2C_TEXT_TOKENIZER_NORMALIZER_H
#define COHERE2C_TEXT_TOKENIZER_NORMALIZER_H

#include "text/tokenizer/Json.h"

#include <string>
#include <string_view>

namespace cohere2c::text {

class Normalizer {
public:
  /// The normalizer of tokenizer.json's /normalizer. Throws
  /// TokenizerJsonError for an unsupported type ("unsupported normalizer
  /// 'Lowercase'") or a malformed Sequence.
  static Normalizer parse(const JsonNode &node);

  /// `text` (valid UTF-8) normalized: `text` itself when that changes
  /// nothing, else a view of `storage`, which holds the normalized text.
  /// utf8proc fails only on invalid UTF-8, which encode() rejects first, and
  /// on running out of memory, which throws std::bad_alloc like any
  /// allocation.
  std::string_view normalize(std::string_view text, std::string &storage) const;

private:
  bool nfc_ = false;
};

} // namespace cohere2c::text

#endif // COHERE2C_TEXT_TOKENIZER_NORMALIZER_H
