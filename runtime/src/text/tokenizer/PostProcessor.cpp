//===- PostProcessor.cpp - tokenizer.json's post-processor ----------------===//
#include "text/tokenizer/PostProcessor.h"

namespace cohere2c::text {

PostProcessor PostProcessor::parse(const JsonNode &node, int64_t idLimit) {
  PostProcessor processor;
  if (node.isNull())
    return processor;
  std::string type = node.type();
  if (type == "ByteLevel")
    return processor;
  if (type != "TemplateProcessing")
    node.member("type").fail("unsupported post-processor '" + type + "'");

  JsonNode specialTokens = node.member("special_tokens");
  processor.pieces_.clear();
  for (const JsonNode &piece : node.member("single").elements()) {
    if (piece.value().contains("Sequence")) {
      JsonNode id = piece.member("Sequence").member("id");
      if (id.asString() != "A")
        id.fail("a single-sequence template can only hold sequence A");
      processor.pieces_.push_back({true, {}});
      continue;
    }
    JsonNode id = piece.member("SpecialToken").member("id");
    if (!specialTokens.value().contains(id.asString()))
      id.fail("'" + id.asString() + "' is not one of special_tokens");
    Piece special{false, {}};
    JsonNode token = specialTokens.member(id.asString());
    for (const JsonNode &tokenId : token.member("ids").elements())
      special.ids.push_back(int32_t(tokenId.asInt(0, idLimit - 1)));
    processor.pieces_.push_back(std::move(special));
  }
  return processor;
}

std::vector<int32_t> PostProcessor::apply(std::vector<int32_t> ids,
                                          bool addSpecialTokens) const {
  if (pieces_.size() == 1 && pieces_[0].isSequence)
    return ids;
  std::vector<int32_t> out;
  for (const Piece &piece : pieces_) {
    if (piece.isSequence)
      out.insert(out.end(), ids.begin(), ids.end());
    else if (addSpecialTokens)
      out.insert(out.end(), piece.ids.begin(), piece.ids.end());
  }
  return out;
}

} // namespace cohere2c::text
