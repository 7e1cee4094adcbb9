//===- PostProcessor.h - tokenizer.json's post-processor ------------------===//
//
// tokenizers' TemplateProcessing (processors/template.rs) for one sequence:
// its "single" template, a list of pieces, each the sequence's ids ($A) or
// the ids of one of its special_tokens, these only with add_special_tokens.
// Cohere's is "<BOS_TOKEN> $A". A ByteLevel post-processor only trims
// offsets, so it leaves the ids as they are, as does none (null).
//
//===----------------------------------------------------------------------===//
#ifndef COHERE2C_TEXT_TOKENIZER_POSTPROCESSOR_H
#define COHERE2C_TEXT_TOKENIZER_POSTPROCESSOR_H

#include "text/tokenizer/Json.h"

#include <cstdint>
#include <vector>

namespace cohere2c::text {

class PostProcessor {
public:
  /// The post-processor of tokenizer.json's /post_processor. Throws
  /// TokenizerJsonError: another type, a template piece that is neither
  /// {"Sequence": {"id": "A"}} nor {"SpecialToken": {"id": ...}} naming one
  /// of special_tokens, a special token id outside [0, idLimit).
  static PostProcessor parse(const JsonNode &node, int64_t idLimit);

  /// The ids of the encoding of one sequence whose own ids are `ids`.
  std::vector<int32_t> apply(std::vector<int32_t> ids,
                             bool addSpecialTokens) const;

private:
  /// A piece of the single template: $A, or a special token's ids.
  struct Piece {
    bool isSequence;
    std::vector<int32_t> ids;
  };
  /// Null and ByteLevel are the template "$A".
  std::vector<Piece> pieces_{{true, {}}};
};

} // namespace cohere2c::text

#endif // COHERE2C_TEXT_TOKENIZER_POSTPROCESSOR_H
