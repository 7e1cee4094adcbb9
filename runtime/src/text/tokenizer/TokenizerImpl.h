//===- TokenizerImpl.h - The components of a parsed tokenizer.json --------===//
//
// What Tokenizer and IncrementalDecoder share: one object per component of
// the tokenizers pipeline, in the order encode() runs them.
//
//===----------------------------------------------------------------------===//
#ifndef COHERE2C_TEXT_TOKENIZER_TOKENIZERIMPL_H
#define COHERE2C_TEXT_TOKENIZER_TOKENIZERIMPL_H

#include "text/tokenizer/AddedTokens.h"
#include "text/tokenizer/Bpe.h"
#include "text/tokenizer/Decoder.h"
#include "text/tokenizer/Normalizer.h"
#include "text/tokenizer/PostProcessor.h"
#include "text/tokenizer/PreTokenizer.h"
#include "text/tokenizer/Tokenizer.h"

#include <memory>

namespace cohere2c::text {

struct Tokenizer::Impl {
  std::unique_ptr<AddedVocabulary> added;
  Normalizer normalizer;
  std::unique_ptr<PreTokenizer> preTokenizer;
  std::unique_ptr<BpeModel> model;
  PostProcessor postProcessor;
  Decoder decoder;
};

} // namespace cohere2c::text

#endif // COHERE2C_TEXT_TOKENIZER_TOKENIZERIMPL_H
