//===- Decoder.cpp - From ids back to text --------------------------------===//
#include "text/tokenizer/Decoder.h"

#include "text/tokenizer/ByteLevel.h"

#include <algorithm>

namespace cohere2c::text {

Decoder Decoder::parse(const JsonNode &node, const BpeModel &model,
                       const AddedVocabulary &added) {
  Decoder decoder;
  if (!node.isNull()) {
    std::string type = node.type();
    if (type != "ByteLevel")
      node.member("type").fail("unsupported decoder '" + type + "'");
    decoder.byteLevel_ = true;
  }
  int64_t limit = std::max(model.idLimit(), added.idLimit());
  decoder.kinds_.assign(size_t(limit), Kind::Unknown);
  decoder.ends_.reserve(size_t(limit));
  for (int32_t id = 0; id < limit; ++id) {
    const AddedToken *addedToken = added.byId(id);
    const std::string *token =
        addedToken ? &addedToken->pattern : model.idToToken(id);
    if (token) {
      decoder.kinds_[size_t(id)] =
          added.isSpecialContent(*token) ? Kind::Special : Kind::Token;
      decoder.bytes_ +=
          decoder.byteLevel_ ? byte_level::decodeToken(*token) : *token;
    }
    decoder.ends_.push_back(decoder.bytes_.size());
  }
  return decoder;
}

Status Decoder::append(int32_t id, bool skipSpecialTokens, bool &started,
                       std::string &bytes) const {
  if (id < 0 || id >= idLimit() || kinds_[size_t(id)] == Kind::Unknown)
    return Status::error("decode: id " + std::to_string(id) +
                         " is not in the vocabulary (" +
                         std::to_string(idLimit()) + " ids)");
  if (skipSpecialTokens && kinds_[size_t(id)] == Kind::Special)
    return Status::success();
  if (!byteLevel_ && started)
    bytes += ' ';
  started = true;
  size_t begin = id == 0 ? 0 : ends_[size_t(id) - 1];
  bytes.append(bytes_, begin, ends_[size_t(id)] - begin);
  return Status::success();
}

} // namespace cohere2c::text
