//===- Tokenizer.cpp - Hugging Face tokenizer.json, byte-level BPE --------===//
//
// encode() is tokenizers' TokenizerImpl::encode_single_sequence and
// post_process (tokenizer/mod.rs): added tokens, normalizer, pre-tokenizer,
// model, post-processor.
//
//===----------------------------------------------------------------------===//
#include "text/tokenizer/Tokenizer.h"

#include "Support/Json.h"
#include "text/tokenizer/TokenizerImpl.h"
#include "text/tokenizer/Utf8.h"

#include <algorithm>

using nlohmann::json;

namespace cohere2c::text {

namespace {

/// The top-level fields that configure what encode() does not implement.
void checkTopLevel(const JsonNode &root) {
  JsonNode version = root.optionalMember("version");
  if (!version.isNull() && version.asString() != "1.0")
    version.fail("unknown tokenizer version '" + version.asString() + "'");
  for (const char *field : {"truncation", "padding"}) {
    JsonNode value = root.optionalMember(field);
    if (!value.isNull())
      value.fail(std::string("unsupported ") + field + " (supported: null)");
  }
}

std::unique_ptr<Tokenizer::Impl> parseComponents(const JsonNode &root) {
  checkTopLevel(root);
  auto impl = std::make_unique<Tokenizer::Impl>();
  impl->model = BpeModel::parse(root.member("model"));
  impl->normalizer = Normalizer::parse(root.optionalMember("normalizer"));
  impl->preTokenizer =
      PreTokenizer::parse(root.optionalMember("pre_tokenizer"));
  impl->added = AddedVocabulary::parse(root.optionalMember("added_tokens"),
                                       *impl->model, impl->normalizer);
  int64_t idLimit = std::max(impl->model->idLimit(), impl->added->idLimit());
  impl->postProcessor =
      PostProcessor::parse(root.optionalMember("post_processor"), idLimit);
  impl->decoder = Decoder::parse(root.optionalMember("decoder"), *impl->model,
                                 *impl->added);
  return impl;
}

/// Appends the ids of a piece of text between added tokens (tokenizers'
/// extract_and_normalize, pass 2, then pre-tokenizer and model).
Status encodePiece(const Tokenizer::Impl &impl, std::string_view text,
                   std::vector<int32_t> &ids) {
  std::string storage;
  text = impl.normalizer.normalize(text, storage);
  std::vector<Segment> segments;
  impl.added->split(text, /*normalizedTokens=*/true, segments);
  Words words;
  for (const Segment &segment : segments) {
    if (segment.id >= 0) {
      ids.push_back(segment.id);
      continue;
    }
    words.clear();
    if (Status status = impl.preTokenizer->split(segment.text, words);
        !status.ok())
      return status;
    for (size_t i = 0; i < words.size(); ++i)
      impl.model->tokenize(words[i], ids);
  }
  return Status::success();
}

} // namespace

Tokenizer::Tokenizer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Tokenizer::~Tokenizer() = default;

StatusOr<std::shared_ptr<const Tokenizer>>
Tokenizer::parse(std::string_view text, const std::string &source) {
  try {
    StatusOr<json> root = parseJson(text, source);
    if (!root.ok())
      return root.status();
    std::unique_ptr<Impl> impl = parseComponents(JsonNode(*root, source));
    return std::shared_ptr<const Tokenizer>(new Tokenizer(std::move(impl)));
  } catch (const TokenizerJsonError &e) {
    return Status::error(e.what());
  } catch (const std::exception &e) {
    return Status::error(source + ": " + e.what());
  }
}

StatusOr<std::vector<int32_t>> Tokenizer::encode(std::string_view text,
                                                 bool addSpecialTokens) const {
  size_t invalid = utf8::findInvalid(text);
  if (invalid != utf8::kValid)
    return Status::error("encode: the text is not valid UTF-8 at byte " +
                         std::to_string(invalid));
  try {
    std::vector<int32_t> ids;
    std::vector<Segment> segments;
    impl_->added->split(text, /*normalizedTokens=*/false, segments);
    for (const Segment &segment : segments) {
      if (segment.id >= 0)
        ids.push_back(segment.id);
      else if (Status status = encodePiece(*impl_, segment.text, ids);
               !status.ok())
        return status;
    }
    return impl_->postProcessor.apply(std::move(ids), addSpecialTokens);
  } catch (const std::exception &e) {
    return Status::error(std::string("encode: ") + e.what());
  }
}

StatusOr<std::string> Tokenizer::decode(const std::vector<int32_t> &ids,
                                        bool skipSpecialTokens) const {
  try {
    std::string bytes;
    bool started = false;
    for (int32_t id : ids)
      if (Status status =
              impl_->decoder.append(id, skipSpecialTokens, started, bytes);
          !status.ok())
        return status;
    std::string text;
    utf8::appendLossy(bytes, /*complete=*/true, text);
    return text;
  } catch (const std::exception &e) {
    return Status::error(std::string("decode: ") + e.what());
  }
}

std::optional<int32_t> Tokenizer::tokenToId(std::string_view token) const {
  std::string key(token);
  if (std::optional<int32_t> id = impl_->added->tokenToId(key))
    return id;
  return impl_->model->tokenToId(key);
}

int64_t Tokenizer::vocabSize() const { return impl_->decoder.idLimit(); }

bool Tokenizer::isSpecial(int32_t id) const {
  const AddedToken *token = impl_->added->byId(id);
  return token && token->special;
}

} // namespace cohere2c::text
