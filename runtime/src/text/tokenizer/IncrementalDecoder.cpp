//===- IncrementalDecoder.cpp - Decoding ids as they are generated --------===//
//
// decode() joins the bytes of all ids and decodes them once, lossily. That
// decoding is the same when cut where a character (or a maximal invalid
// subpart) ends, so push() decodes all it can and keeps only the bytes of a
// well-formed but unfinished character for the next id.
//
//===----------------------------------------------------------------------===//
#include "text/tokenizer/Tokenizer.h"

#include "text/tokenizer/TokenizerImpl.h"
#include "text/tokenizer/Utf8.h"

namespace cohere2c::text {

IncrementalDecoder::IncrementalDecoder(const Tokenizer &tokenizer,
                                       bool skipSpecialTokens)
    : impl_(tokenizer.impl_.get()), skipSpecialTokens_(skipSpecialTokens) {}

StatusOr<std::string> IncrementalDecoder::push(int32_t id) {
  if (Status status =
          impl_->decoder.append(id, skipSpecialTokens_, started_, pending_);
      !status.ok())
    return status;
  std::string text;
  pending_.erase(0, utf8::appendLossy(pending_, /*complete=*/false, text));
  return text;
}

std::string IncrementalDecoder::finish() {
  std::string text;
  utf8::appendLossy(pending_, /*complete=*/true, text);
  pending_.clear();
  started_ = false;
  return text;
}

} // namespace cohere2c::text
