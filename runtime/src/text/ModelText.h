//===- ModelText.h - A model's tokenizer, chat template and EOS ids -------===//
//
// Binds the text files of a checkpoint (Artifact/TextFiles.h: from the
// folder, or as the compiler copied them into OUT.so) into what turns a
// prompt or a chat into token ids and generated ids back into text, the way
// Hugging Face transformers does:
//   - prompt text: the tokenizer's encode with special tokens (the BOS as
//     its post-processor adds it);
//   - a chat: apply_chat_template(messages, add_generation_prompt,
//     documents, tools) rendered with the special tokens of
//     tokenizer_config.json as variables, then encoded WITHOUT special
//     tokens (the template writes the BOS itself);
//   - the EOS ids: generation_config.json's eos_token_id (one id or a list),
//     else config.json's.
//
// Immutable after create(); safe to use from many threads at once.
//
//===----------------------------------------------------------------------===//
#ifndef COHERE2C_TEXT_MODELTEXT_H
#define COHERE2C_TEXT_MODELTEXT_H

#include "Artifact/TextFiles.h"
#include "Support/Status.h"
#include "text/chat_template/ChatTemplate.h"
#include "text/tokenizer/Tokenizer.h"

#include <nlohmann/json.hpp>

#include <memory>
#include <string>
#include <vector>

namespace cohere2c::text {

class ModelText {
public:
  /// `source` names where the files came from (a checkpoint folder or an
  /// artifact) in errors; `configEosIds` are config.json's EOS ids. Errors:
  /// no tokenizer.json; the tokenizer's, the template's parse errors;
  /// tokenizer_config.json or generation_config.json that is not JSON or
  /// has a field of the wrong type, or an EOS id outside the tokenizer's
  /// vocabulary (naming file and field).
  static StatusOr<std::unique_ptr<ModelText>>
  create(const TextFiles &files, const std::string &source,
         const std::vector<int64_t> &configEosIds);

  const Tokenizer &tokenizer() const { return *tokenizer_; }

  /// Ids of `text`, special tokens added (Tokenizer::encode).
  StatusOr<std::vector<int32_t>> encodePrompt(std::string_view text) const;

  bool hasChatTemplate() const { return chatTemplate_ != nullptr; }

  /// The text of a chat: `chat` is a JSON object with `messages` (an array
  /// of objects, each with a string `role`) and optionally `documents` and
  /// `tools` (arrays; absent or null: None in the template). Errors: no
  /// chat template; a malformed chat (naming the field); the template's
  /// render errors (ChatTemplate::render, e.g. roles that do not
  /// alternate).
  StatusOr<std::string> renderChat(const nlohmann::ordered_json &chat,
                                   bool addGenerationPrompt) const;
  /// renderChat, then encoded without special tokens.
  StatusOr<std::vector<int32_t>> encodeChat(const nlohmann::ordered_json &chat,
                                            bool addGenerationPrompt) const;

  /// Where generation stops unless EOS is ignored.
  const std::vector<int64_t> &eosTokenIds() const { return eosTokenIds_; }

private:
  ModelText() = default;
  std::shared_ptr<const Tokenizer> tokenizer_;
  std::shared_ptr<const ChatTemplate> chatTemplate_;
  /// bos_token, eos_token, ... of tokenizer_config.json, as strings.
  nlohmann::ordered_json specialTokens_ = nlohmann::ordered_json::object();
  std::vector<int64_t> eosTokenIds_;
};

/// Whether a chat message (an object with a string role) must carry its
/// text in `content`: every role's but the assistant's, whose message may
/// hold tool calls alone.
bool messageNeedsText(const nlohmann::ordered_json &message);

} // namespace cohere2c::text

#endif // COHERE2C_TEXT_MODELTEXT_H
